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
        [bitsPerPixel, depth, bigEndian ? 1 : 0, trueColour ? 1 : 0,
         UInt8(redMax >> 8), UInt8(redMax & 0xff), UInt8(greenMax >> 8), UInt8(greenMax & 0xff), UInt8(blueMax >> 8), UInt8(blueMax & 0xff),
         redShift, greenShift, blueShift, 0, 0, 0]
    }

    /// Parses SetPixelFormat's 16 bytes; nil for what this server does not write.
    static func parse(_ b: [UInt8]) -> RFBPixelFormat? {
        guard b.count >= 16 else { return nil }
        let f = RFBPixelFormat(bitsPerPixel: b[0], depth: b[1], bigEndian: b[2] != 0, trueColour: b[3] != 0,
                               redMax: UInt16(b[4]) << 8 | UInt16(b[5]), greenMax: UInt16(b[6]) << 8 | UInt16(b[7]),
                               blueMax: UInt16(b[8]) << 8 | UInt16(b[9]), redShift: b[10], greenShift: b[11], blueShift: b[12])
        guard f.trueColour, [8, 16, 32].contains(f.bitsPerPixel), f.redMax > 0, f.greenMax > 0, f.blueMax > 0,
              f.redShift < f.bitsPerPixel, f.greenShift < f.bitsPerPixel, f.blueShift < f.bitsPerPixel else { return nil }
        return f
    }

    /// Whether 32-bit B, G, R, X source pixels can be copied as they are.
    var isBGRX: Bool { self == .serverDefault || (bitsPerPixel == 32 && !bigEndian && redMax == 255 && greenMax == 255 && blueMax == 255
                                                   && redShift == 16 && greenShift == 8 && blueShift == 0) }

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
                let r = UInt32(p[col * 4 + ri]), g = UInt32(p[col * 4 + 1]), b = UInt32(p[col * 4 + bi])
                let v = (r * UInt32(redMax) / 255) << UInt32(redShift) | (g * UInt32(greenMax) / 255) << UInt32(greenShift)
                    | (b * UInt32(blueMax) / 255) << UInt32(blueShift)
                switch bitsPerPixel {
                case 8: out.append(UInt8(truncatingIfNeeded: v))
                case 16:
                    if bigEndian { out += [UInt8(truncatingIfNeeded: v >> 8), UInt8(truncatingIfNeeded: v)] }
                    else { out += [UInt8(truncatingIfNeeded: v), UInt8(truncatingIfNeeded: v >> 8)] }
                default:
                    if bigEndian { out += [UInt8(truncatingIfNeeded: v >> 24), UInt8(truncatingIfNeeded: v >> 16), UInt8(truncatingIfNeeded: v >> 8), UInt8(truncatingIfNeeded: v)] }
                    else { out += [UInt8(truncatingIfNeeded: v), UInt8(truncatingIfNeeded: v >> 8), UInt8(truncatingIfNeeded: v >> 16), UInt8(truncatingIfNeeded: v >> 24)] }
                }
            }
        }
    }
}
