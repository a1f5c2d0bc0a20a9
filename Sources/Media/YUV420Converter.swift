/// Packed 32-bit RGB (a screen capture) → planar YUV 4:2:0 at the same size, BT.601 limited range
/// (what libswscale produces by default and H.264 players assume). libswscale has no unscaled path
/// for 32-bit RGB → YUV420P and runs its generic scaler: ~10 ms a 1080p frame here, a third of a
/// screen recording's CPU (as much as ffmpeg's own x11grab pipeline spends). This does the same
/// work eight pixels at a time in 16-bit lanes (what SSE2 multiplies natively): ~4× less.
/// Chroma is the rounded mean of each 2×2 block; coefficients are the usual 8-bit ones, within
/// one step of libswscale's (the test compares the two).
public enum YUV420Converter {
    /// Bit positions of red, green and blue in a pixel read as a little-endian 32-bit word.
    struct Shifts {
        let r: UInt32, g: UInt32, b: UInt32
    }

    static func shifts(_ layout: PixelLayout) -> Shifts? {
        switch layout {
        case .bgrx: return Shifts(r: 16, g: 8, b: 0)
        case .rgbx: return Shifts(r: 0, g: 8, b: 16)
        case .xrgb: return Shifts(r: 8, g: 16, b: 24)
        case .xbgr: return Shifts(r: 24, g: 16, b: 8)
        case .bgr24, .rgb24, .rgb565le, .bgr565le, .rgb555le, .yuyv, .nv12: return nil
        }
    }

    /// Whether `source` converts here into a width×height frame (same size, even, 32-bit RGB).
    public static func handles(_ source: PixelView, width: Int, height: Int) -> Bool {
        source.width == width && source.height == height && width % 2 == 0 && height % 2 == 0 && shifts(source.layout) != nil
    }

    /// Writes Y (width×height), U and V (each width/2 × height/2) planes. Call only when `handles`.
    public static func convert(_ source: PixelView,
                               y: UnsafeMutablePointer<UInt8>, yStride: Int,
                               u: UnsafeMutablePointer<UInt8>, uStride: Int,
                               v: UnsafeMutablePointer<UInt8>, vStride: Int) {
        guard let s = shifts(source.layout) else { preconditionFailure("YUV420Converter: \(source.layout) is not 32-bit RGB") }
        precondition(source.width % 2 == 0 && source.height % 2 == 0, "YUV420Converter needs even sizes")
        let width = source.width
        let vectorWidth = width & ~7
        for pair in 0..<(source.height / 2) {
            let row0 = source.base + (2 * pair) * source.bytesPerRow
            let row1 = row0 + source.bytesPerRow
            let y0 = y + (2 * pair) * yStride, y1 = y0 + yStride
            let uRow = u + pair * uStride, vRow = v + pair * vStride
            var x = 0
            while x < vectorWidth {
                let p0 = row0.loadUnaligned(fromByteOffset: x * 4, as: SIMD8<UInt32>.self)
                let p1 = row1.loadUnaligned(fromByteOffset: x * 4, as: SIMD8<UInt32>.self)
                let (r0, g0, b0) = channels(p0, s), (r1, g1, b1) = channels(p1, s)
                UnsafeMutableRawPointer(y0).storeBytes(of: luma(r0, g0, b0), toByteOffset: x, as: SIMD8<UInt8>.self)
                UnsafeMutableRawPointer(y1).storeBytes(of: luma(r1, g1, b1), toByteOffset: x, as: SIMD8<UInt8>.self)
                // Sums of each 2×2 block (≤ 1020: fits 16 bits), then the rounded mean.
                let rs = r0 &+ r1, gs = g0 &+ g1, bs = b0 &+ b1
                let r = SIMD4<Int16>(truncatingIfNeeded: (rs.evenHalf &+ rs.oddHalf &+ 2) &>> 2)
                let g = SIMD4<Int16>(truncatingIfNeeded: (gs.evenHalf &+ gs.oddHalf &+ 2) &>> 2)
                let b = SIMD4<Int16>(truncatingIfNeeded: (bs.evenHalf &+ bs.oddHalf &+ 2) &>> 2)
                UnsafeMutableRawPointer(uRow).storeBytes(of: chroma(r, g, b, -38, -74, 112), toByteOffset: x / 2, as: SIMD4<UInt8>.self)
                UnsafeMutableRawPointer(vRow).storeBytes(of: chroma(r, g, b, 112, -94, -18), toByteOffset: x / 2, as: SIMD4<UInt8>.self)
                x += 8
            }
            // The last < 8 columns (widths that are not a multiple of 8), two at a time.
            while x < width {
                var rSum = 0, gSum = 0, bSum = 0
                for i in 0..<4 {
                    let row = i < 2 ? row0 : row1, out = i < 2 ? y0 : y1, column = x + (i & 1)
                    let p = row.loadUnaligned(fromByteOffset: column * 4, as: UInt32.self)
                    let r = Int((p >> s.r) & 0xff), g = Int((p >> s.g) & 0xff), b = Int((p >> s.b) & 0xff)
                    out[column] = UInt8(((66 * r + 129 * g + 25 * b + 128) >> 8) + 16)
                    rSum += r; gSum += g; bSum += b
                }
                let r = (rSum + 2) >> 2, g = (gSum + 2) >> 2, b = (bSum + 2) >> 2
                uRow[x / 2] = UInt8(((-38 * r - 74 * g + 112 * b + 128) >> 8) + 128)
                vRow[x / 2] = UInt8(((112 * r - 94 * g - 18 * b + 128) >> 8) + 128)
                x += 2
            }
        }
    }

    @inline(__always)
    private static func channels(_ p: SIMD8<UInt32>, _ s: Shifts) -> (SIMD8<UInt16>, SIMD8<UInt16>, SIMD8<UInt16>) {
        (SIMD8<UInt16>(truncatingIfNeeded: (p &>> s.r) & 0xff),
         SIMD8<UInt16>(truncatingIfNeeded: (p &>> s.g) & 0xff),
         SIMD8<UInt16>(truncatingIfNeeded: (p &>> s.b) & 0xff))
    }

    /// Y = ((66 R + 129 G + 25 B + 128) >> 8) + 16; the sum (≤ 56 228) fits UInt16.
    /// (Written as typed steps: Swift 6.0's type checker gives up on the one-line form.)
    @inline(__always)
    private static func luma(_ r: SIMD8<UInt16>, _ g: SIMD8<UInt16>, _ b: SIMD8<UInt16>) -> SIMD8<UInt8> {
        var sum: SIMD8<UInt16> = r &* 66
        sum &+= g &* 129
        sum &+= b &* 25
        sum &+= SIMD8<UInt16>(repeating: 128)
        let y: SIMD8<UInt16> = (sum &>> 8) &+ SIMD8<UInt16>(repeating: 16)
        return SIMD8<UInt8>(truncatingIfNeeded: y)
    }

    /// U or V = ((kr R + kg G + kb B + 128) >> 8) + 128 of four 2×2 means; |k| × 255 ≤ 28 560, so
    /// the sums stay inside Int16.
    @inline(__always)
    private static func chroma(_ r: SIMD4<Int16>, _ g: SIMD4<Int16>, _ b: SIMD4<Int16>,
                               _ kr: Int16, _ kg: Int16, _ kb: Int16) -> SIMD4<UInt8> {
        var sum: SIMD4<Int16> = r &* kr
        sum &+= g &* kg
        sum &+= b &* kb
        sum &+= SIMD4<Int16>(repeating: 128)
        let c: SIMD4<Int16> = (sum &>> 8) &+ SIMD4<Int16>(repeating: 128)
        return SIMD4<UInt8>(truncatingIfNeeded: c)
    }
}
