import CX11
import Media

/// A tiny X client for the screen tests: paints known rectangles on root windows, moves the
/// pointer and defines RandR monitors. Owns its Display; one test thread at a time.
final class XPainter {
    let display: OpaquePointer

    init(_ name: String) throws {
        guard let d = XOpenDisplay(name) else { throw TestFailure("cannot open \(name)") }
        display = d
    }

    deinit { XCloseDisplay(display) }

    func root(_ screen: Int32? = nil) -> Window {
        cx11_root_window(display, screen ?? cx11_default_screen(display))
    }

    /// Fills a rectangle of `screen`'s root window with 0xRRGGBB (a TrueColor pixel at depth 24).
    func fill(screen: Int32? = nil, x: Int, y: Int, width: Int, height: Int, rgb: UInt32) {
        let window = root(screen)
        let gc = XCreateGC(display, window, 0, nil)
        XSetForeground(display, gc, UInt(rgb))
        XFillRectangle(display, window, gc, Int32(x), Int32(y), UInt32(width), UInt32(height))
        XFreeGC(display, gc)
        XSync(display, 0)
    }

    /// Draws an RGB image at (x, y) of the default screen's root window (TrueColor, depth 24),
    /// through the server as a program would.
    func put(_ image: DecodedImage, x: Int, y: Int) {
        var pixels = [UInt8](repeating: 0, count: image.width * image.height * 4)
        for i in 0..<(image.width * image.height) {  // BGRX, what a depth-24 ZPixmap holds
            pixels[4 * i] = image.rgb[3 * i + 2]; pixels[4 * i + 1] = image.rgb[3 * i + 1]; pixels[4 * i + 2] = image.rgb[3 * i]
        }
        let screen = cx11_default_screen(display)
        pixels.withUnsafeMutableBytes { raw in
            guard let img = XCreateImage(display, XDefaultVisual(display, screen), UInt32(XDefaultDepth(display, screen)), ZPixmap, 0,
                                         raw.baseAddress!.assumingMemoryBound(to: CChar.self), UInt32(image.width), UInt32(image.height),
                                         32, Int32(image.width * 4)) else { return }
            // Put off screen first, then one CopyArea: Xlib sends a large image in strips, which a
            // capture between them would see half drawn (one change would be several frames); the
            // server does one request whole, between other clients' requests.
            let depth = UInt32(XDefaultDepth(display, screen))
            let pixmap = XCreatePixmap(display, root(), UInt32(image.width), UInt32(image.height), depth)
            let gc = XCreateGC(display, root(), 0, nil)
            XPutImage(display, pixmap, gc, img, 0, 0, 0, 0, UInt32(image.width), UInt32(image.height))
            XCopyArea(display, pixmap, root(), gc, 0, 0, UInt32(image.width), UInt32(image.height), Int32(x), Int32(y))
            XFreeGC(display, gc)
            XFreePixmap(display, pixmap)
            XSync(display, 0)
            img.pointee.data = nil  // the pixels are this array's, not Xlib's to free
            XFree(img)
        }
    }

    func warpPointer(screen: Int32? = nil, x: Int, y: Int) {
        XWarpPointer(display, 0, root(screen), 0, 0, 0, 0, Int32(x), Int32(y))
        XSync(display, 0)
    }

    /// Defines a RandR 1.5 monitor without outputs (like `xrandr --setmonitor NAME geometry none`).
    func setMonitor(_ name: String, x: Int, y: Int, width: Int, height: Int) {
        guard let m = XRRAllocateMonitor(display, 0) else { return }
        m.pointee.name = XInternAtom(display, name, 0)
        m.pointee.x = Int32(x); m.pointee.y = Int32(y)
        m.pointee.width = Int32(width); m.pointee.height = Int32(height)
        m.pointee.mwidth = Int32(width / 4); m.pointee.mheight = Int32(height / 4)
        XRRSetMonitor(display, root(), m)
        XRRFreeMonitors(m)
        XSync(display, 0)
    }
}
