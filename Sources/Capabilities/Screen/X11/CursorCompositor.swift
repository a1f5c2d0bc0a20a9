import CX11Capture
import Media
import X11Support

/// Draws the pointer into a captured frame (X servers never include it in screen contents).
/// XFixes hands out the current cursor sprite as premultiplied ARGB with its hotspot.
enum CursorCompositor {
    /// Blends the cursor into `pixels` (a capture of `target`, writable memory we own).
    /// Silently does nothing when XFixes is missing, the pointer is on another screen or outside
    /// the target, or the layout has no 8-bit channels.
    static func draw(on connection: X11Connection, target: X11Target, pixels: UnsafeMutableRawPointer,
                     bytesPerRow: Int, layout: PixelLayout) {
        guard let offsets = channelOffsets(layout) else { return }
        let d = connection.display
        var event: Int32 = 0, error: Int32 = 0
        guard XFixesQueryExtension(d, &event, &error) != 0 else { return }
        // XQueryPointer answers False when the pointer is on another X screen.
        var root: Window = 0, child: Window = 0
        var rootX: Int32 = 0, rootY: Int32 = 0, winX: Int32 = 0, winY: Int32 = 0, mask: UInt32 = 0
        guard XQueryPointer(d, connection.root(target.screen), &root, &child, &rootX, &rootY, &winX, &winY, &mask) != 0 else { return }
        guard let cursor = XFixesGetCursorImage(d) else { return }
        defer { XFree(cursor) }
        let c = cursor.pointee
        let left = Int(rootX) - Int(c.xhot) - target.x
        let top = Int(rootY) - Int(c.yhot) - target.y
        let bpp = layout.bytesPerPixel
        for cy in 0..<Int(c.height) {
            let y = top + cy
            guard y >= 0, y < target.height else { continue }
            let row = pixels + y * bytesPerRow
            for cx in 0..<Int(c.width) {
                let x = left + cx
                guard x >= 0, x < target.width else { continue }
                // One ARGB value per unsigned long.
                let argb = UInt32(truncatingIfNeeded: c.pixels[cy * Int(c.width) + cx])
                let alpha = argb >> 24
                guard alpha != 0 else { continue }
                let px = (row + x * bpp).assumingMemoryBound(to: UInt8.self)
                // Premultiplied "over": out = src + dst × (1 − α).
                func blend(_ offset: Int, _ source: UInt32) {
                    px[offset] = UInt8(min(255, source + UInt32(px[offset]) * (255 - alpha) / 255))
                }
                blend(offsets.r, (argb >> 16) & 0xff)
                blend(offsets.g, (argb >> 8) & 0xff)
                blend(offsets.b, argb & 0xff)
            }
        }
    }

    /// Byte offsets of red, green and blue inside one pixel.
    private static func channelOffsets(_ layout: PixelLayout) -> (r: Int, g: Int, b: Int)? {
        switch layout {
        case .bgrx, .bgr24: return (2, 1, 0)
        case .rgbx, .rgb24: return (0, 1, 2)
        case .xrgb: return (1, 2, 3)
        case .xbgr: return (3, 2, 1)
        case .rgb565le, .bgr565le, .rgb555le, .yuyv, .nv12: return nil
        }
    }
}
