/// Copies rows of the 24- and 32-bit RGB layouts into the R, G, B byte order PNG stores, so the
/// PNG writer reads capture memory (a Wayland shm buffer, an X11 shared-memory image) in place
/// and converts each pixel once, on its way into deflate. Other layouts have none (nil).
struct RGBRowPacker {
    private let layout: PixelLayout

    init?(_ layout: PixelLayout) {
        switch layout {
        case .bgrx, .rgbx, .xrgb, .xbgr, .bgr24, .rgb24: self.layout = layout
        case .rgb565le, .bgr565le, .rgb555le, .yuyv, .nv12: return nil
        }
    }

    /// Writes `width` pixels of the row at `source` as 3 bytes each to `destination`.
    func pack(_ source: UnsafeRawPointer, into destination: UnsafeMutablePointer<UInt8>, width: Int) {
        let s = source.assumingMemoryBound(to: UInt8.self)
        switch layout {
        case .bgrx: Self.pack(s, destination, width, step: 4, r: 2, g: 1, b: 0)
        case .rgbx: Self.pack(s, destination, width, step: 4, r: 0, g: 1, b: 2)
        case .xrgb: Self.pack(s, destination, width, step: 4, r: 1, g: 2, b: 3)
        case .xbgr: Self.pack(s, destination, width, step: 4, r: 3, g: 2, b: 1)
        case .bgr24: Self.pack(s, destination, width, step: 3, r: 2, g: 1, b: 0)
        case .rgb24: destination.update(from: s, count: width * 3)
        case .rgb565le, .bgr565le, .rgb555le, .yuyv, .nv12: preconditionFailure("no packer for \(layout)")
        }
    }

    // Inlined into each case above with constant offsets, so every layout gets a loop of its own.
    @inline(__always)
    private static func pack(_ s: UnsafePointer<UInt8>, _ d: UnsafeMutablePointer<UInt8>, _ width: Int,
                             step: Int, r: Int, g: Int, b: Int) {
        var i = 0, o = 0
        for _ in 0..<width {
            d[o] = s[i + r]
            d[o + 1] = s[i + g]
            d[o + 2] = s[i + b]
            i += step
            o += 3
        }
    }
}
