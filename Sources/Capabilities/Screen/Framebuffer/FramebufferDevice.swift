import CLinuxFB
import Config
import Glibc
import Kit
import Media
import Support

/// A Linux framebuffer (/dev/fbN) opened read-only and mapped whole. Owns the descriptor and the
/// mapping. The visible picture is read straight from the mapping, honouring line_length
/// (row padding), the panning offsets and the channel bitfields.
final class FramebufferDevice {
    let path: String
    /// Owned: closed exactly once, when this device goes (or when init fails after opening it).
    private let descriptor: FileDescriptor
    private var fd: Int32 { descriptor.rawValue }
    private let mapping: UnsafeMutableRawPointer
    private let mappedLength: Int
    let fixed: fb_fix_screeninfo

    init(path: String) throws(NodeError) {
        self.path = path
        let opened: FileDescriptor
        do throws(Errno) { opened = try FileDescriptor.open(path, O_RDONLY) } catch {
            let hint = error.code == EACCES ? " (add this user to the \"video\" group)"
                : error.code == ENOENT ? " (no framebuffer: is a fbdev/DRM console driver loaded?)" : ""
            throw ScreenError.unavailable("cannot open framebuffer \(path): \(error)\(hint)")
        }
        var fix = fb_fix_screeninfo()
        guard clinuxfb_get_fscreeninfo(opened.rawValue, &fix) == 0 else {
            throw ScreenError.unavailable("\(path) is not a framebuffer (FBIOGET_FSCREENINFO: \(String(cString: strerror(errno))))")
        }
        guard fix.type == FB_TYPE_PACKED_PIXELS, fix.visual == FB_VISUAL_TRUECOLOR || fix.visual == FB_VISUAL_DIRECTCOLOR else {
            throw ScreenError.unavailable("framebuffer \(path) is not packed true-colour (type \(fix.type), visual \(fix.visual)); " +
                                          "palette and planar framebuffers are not supported")
        }
        let length = Int(fix.smem_len)
        let addr = mmap(nil, length, PROT_READ, MAP_SHARED, opened.rawValue, 0)
        guard length > 0, let addr, addr != MAP_FAILED else {
            throw ScreenError.unavailable("cannot map framebuffer \(path) (\(length) bytes): \(String(cString: strerror(errno)))")
        }
        descriptor = opened
        mapping = addr
        mappedLength = length
        fixed = fix
    }

    deinit {
        munmap(mapping, mappedLength)
    }

    /// The current mode; read for every frame because panning (double buffering) moves yoffset.
    func variable() throws(NodeError) -> fb_var_screeninfo {
        var v = fb_var_screeninfo()
        guard clinuxfb_get_vscreeninfo(fd, &v) == 0 else {
            throw ScreenError.unavailable("FBIOGET_VSCREENINFO on \(path) failed: \(String(cString: strerror(errno)))")
        }
        return v
    }

    /// The visible picture, read in place from the mapping.
    func visible() throws(NodeError) -> PixelView {
        let v = try variable()
        guard let layout = PixelLayout.fromChannels(
            bitsPerPixel: Int(v.bits_per_pixel),
            redShift: Int(v.red.offset), redBits: Int(v.red.length),
            greenShift: Int(v.green.offset), greenBits: Int(v.green.length),
            blueShift: Int(v.blue.offset), blueBits: Int(v.blue.length)) else {
            throw ScreenError.unavailable("framebuffer \(path) pixel format is not supported: \(v.bits_per_pixel) bpp, " +
                                          "red \(v.red.offset)/\(v.red.length) green \(v.green.offset)/\(v.green.length) " +
                                          "blue \(v.blue.offset)/\(v.blue.length) (16, 24 and 32 bpp RGB are)")
        }
        let width = Int(v.xres), height = Int(v.yres), stride = Int(fixed.line_length)
        let offset = Int(v.yoffset) * stride + Int(v.xoffset) * layout.bytesPerPixel
        guard width > 0, height > 0, stride >= width * layout.bytesPerPixel,
              offset + (height - 1) * stride + width * layout.bytesPerPixel <= mappedLength else {
            throw ScreenError.unavailable("framebuffer \(path) reports a mode (\(width)x\(height), line_length \(stride), " +
                                          "offset \(v.xoffset),\(v.yoffset)) larger than its memory (\(mappedLength) bytes)")
        }
        return PixelView(base: UnsafeRawPointer(mapping + offset), width: width, height: height, bytesPerRow: stride, layout: layout)
    }
}

/// The framebuffer as a ScreenGrabber: a single screen, no pointer (the console has none).
final class FramebufferGrabber: ScreenGrabber {
    let device: FramebufferDevice
    let width: Int
    let height: Int

    init(path: String, screenIndex: Int) throws(NodeError) {
        guard screenIndex == 0 else {
            throw NodeError.invalidRequest("screenIndex \(screenIndex) is out of range: the framebuffer backend has one screen (screenIndex 0)")
        }
        device = try FramebufferDevice(path: path)
        let first = try device.visible()
        width = first.width
        height = first.height
    }

    var method: String { "fbdev" }

    func isStillValid(screenIndex: Int) -> Bool {
        guard screenIndex == 0, let view = try? device.visible() else { return false }
        return view.width == width && view.height == height
    }

    func liveIdentity(screenIndex: Int) -> String? {
        guard screenIndex == 0, let view = try? device.visible() else { return nil }
        return ["fbdev", device.path, String(view.width), String(view.height)].joined(separator: "\0")
    }

    func grab<T>(includePointer: Bool, _ body: (PixelView) throws(NodeError) -> T) throws(NodeError) -> T {
        let view = try device.visible()
        guard view.width == width, view.height == height else {
            throw ScreenError.unavailable("framebuffer \(device.path) changed mode to \(view.width)x\(view.height) during capture; retry")
        }
        return try body(view)
    }
}
