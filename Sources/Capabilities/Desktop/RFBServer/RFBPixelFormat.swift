/// An RFB pixel format (RFC 6143 §7.4): how the viewer wants pixels written. The node's own RFB
/// server converts its 32-bit frames into any true-colour format of 8, 16 or 32 bits per pixel;
/// colour-map formats (from the days of 256-colour displays) are refused.
struct RFBPixelFormat: Equatable {
    var bitsPerPixel: UInt8 = 32
    var depth: UInt8 = 24
    var bigEndian = false
    var trueColour = true
    var redMax: UInt16 = 255, greenMax: UInt16 = 255, blueMax: UInt16 = 255
    var redShift: UInt8 = 16, greenShift: UInt8 = 8, blueShift: UInt8 = 0

    /// What the server offers first: B, G, R, X in memory, the frames' own order.
    static let serverDefault = RFBPixelFormat()

    var bytesPerPixel: Int { Int(bitsPerPixel) / 8 }

    /// The 16 bytes of ServerInit and SetPixelFormat.
    var encoded: [UInt8] {
        var out: [UInt8] = [bitsPerPixel, depth, bigEndian ? 1 : 0, trueColour ? 1 : 0]
        for max in [redMax, greenMax, blueMax] { out += [UInt8(max >> 8), UInt8(max & 0xff)] }
        out += [redShift, greenShift, blueShift, 0, 0, 0]
        return out
    }

    /// Parses SetPixelFormat's 16 bytes; nil for what this server does not write.
    static func parse(_ b: [UInt8]) -> RFBPixelFormat? {
        guard b.count >= 16 else { return nil }
        func u16(_ i: Int) -> UInt16 { UInt16(b[i]) << 8 | UInt16(b[i + 1]) }
        let f = RFBPixelFormat(bitsPerPixel: b[0], depth: b[1], bigEndian: b[2] != 0, trueColour: b[3] != 0,
                               redMax: u16(4), greenMax: u16(6), blueMax: u16(8), redShift: b[10], greenShift: b[11], blueShift: b[12])
        guard f.trueColour, [8, 16, 32].contains(f.bitsPerPixel), f.redMax > 0, f.greenMax > 0, f.blueMax > 0,
              f.redShift < f.bitsPerPixel, f.greenShift < f.bitsPerPixel, f.blueShift < f.bitsPerPixel else { return nil }
        return f
    }

    /// Whether 32-bit B, G, R, X source pixels can be copied as they are.
    var isBGRX: Bool { self == .serverDefault || (bitsPerPixel == 32 && !bigEndian && redMax == 255 && greenMax == 255 && blueMax == 255
                                                   && redShift == 16 && greenShift == 8 && blueShift == 0) }

    /// An 8-bit channel scaled to `max` and placed at `shift`.
    private func channel(_ value: UInt8, _ max: UInt16, _ shift: UInt8) -> UInt32 {
        (UInt32(value) * UInt32(max) / 255) << UInt32(shift)
    }

    /// Appends the rectangle's pixels (rows of 32-bit source pixels, `rgbOrder`: R first in memory
    /// instead of B) in this format to `out`.
    func append(rows source: UnsafeRawPointer, bytesPerRow: Int, x: Int, y: Int, width: Int, height: Int,
                rgbOrder: Bool, to out: inout [UInt8]) {
        let start = out.count
        out.reserveCapacity(start + width * height * bytesPerPixel)
        if isBGRX && !rgbOrder {
            for row in 0..<height {
                let p = source + (y + row) * bytesPerRow + x * 4
                out.append(contentsOf: UnsafeRawBufferPointer(start: p, count: width * 4))
            }
            return
        }
        let (ri, bi) = rgbOrder ? (0, 2) : (2, 0)
        for row in 0..<height {
            let p = (source + (y + row) * bytesPerRow + x * 4).assumingMemoryBound(to: UInt8.self)
            for col in 0..<width {
                let v = channel(p[col * 4 + ri], redMax, redShift) | channel(p[col * 4 + 1], greenMax, greenShift)
                    | channel(p[col * 4 + bi], blueMax, blueShift)
                // The pixel's bytes, least significant first, reversed for a big-endian viewer.
                let bytes = bytesPerPixel
                for i in 0..<bytes {
                    let shift = UInt32(8 * (bigEndian ? bytes - 1 - i : i))
                    out.append(UInt8(truncatingIfNeeded: v >> shift))
                }
            }
        }
    }
}
