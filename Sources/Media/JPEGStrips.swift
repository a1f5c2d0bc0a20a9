import Glibc

/// How a JPEG is cut into horizontal strips that are encoded separately and joined into one
/// baseline stream, and the join.
///
/// Every strip but the last is a whole number of MCU rows (16 pixel rows at 4:2:0) and exactly one
/// restart interval long, so each strip's encoder starts where a decoder expects a restart: DC
/// predictions back at zero, the bit buffer empty and padded with ones. The joined stream is the
/// first strip's headers (its frame height set to the whole image's; its DRI segment announcing the
/// interval), each strip's entropy-coded data with RST0…RST7 in turn between them, and EOI: byte
/// for byte what one encoder writes for the whole image with the same restart interval.
struct JPEGStrips {
    /// Pixel rows of each strip.
    let rows: [Range<Int>]
    /// MCUs per restart interval (one strip); 0 with a single strip.
    let restartInterval: Int
    let height: Int

    /// 4:2:0: an MCU is 16×16 pixels.
    static let mcuSize = 16
    /// A restart interval is a 16-bit count of MCUs.
    static let maxInterval = 65535

    /// One strip per core, up to 4, none under 256 Ki pixels: below that a thread and a marker cost
    /// more than they save.
    static func count(width: Int, height: Int) -> Int {
        let cores = max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
        return max(1, min(cores, 4, width * height / (256 * 1024)))
    }

    init(width: Int, height: Int, count wanted: Int) {
        self.height = height
        let mcuRows = (height + Self.mcuSize - 1) / Self.mcuSize
        let mcusPerRow = (width + Self.mcuSize - 1) / Self.mcuSize
        // More strips than asked when one would hold more MCUs than an interval can count (8K wide).
        let needed = (mcuRows * mcusPerRow + Self.maxInterval - 1) / Self.maxInterval
        let wanted = min(mcuRows, max(1, wanted, needed))
        let rowsPerStrip = (mcuRows + wanted - 1) / wanted  // in MCU rows
        let count = (mcuRows + rowsPerStrip - 1) / rowsPerStrip
        rows = (0..<count).map { i in
            (i * rowsPerStrip * Self.mcuSize)..<min(height, (i + 1) * rowsPerStrip * Self.mcuSize)
        }
        restartInterval = count > 1 ? rowsPerStrip * mcusPerRow : 0
    }

    /// One stream from the strips' streams (each a whole JPEG of its rows, encoded with `restartInterval`).
    func join(_ streams: [[UInt8]]) throws(MediaError) -> [UInt8] {
        guard streams.count == rows.count, let first = streams.first else {
            throw MediaError(.codec, "JPEG strips: \(streams.count) streams for \(rows.count) strips")
        }
        let head = try Self.layout(first)
        var out = [UInt8]()
        out.reserveCapacity(streams.reduce(0) { $0 + $1.count } + 2 * streams.count)
        out += first[..<head.entropy.lowerBound]
        out[head.heightOffset] = UInt8(height >> 8)
        out[head.heightOffset + 1] = UInt8(height & 0xFF)
        out += first[head.entropy]
        for (i, stream) in streams.enumerated().dropFirst() {
            out += [0xFF, 0xD0 + UInt8((i - 1) % 8)]
            out += stream[try Self.layout(stream).entropy]
        }
        out += [0xFF, 0xD9]
        return out
    }

    /// Where a baseline stream's frame height sits and where its entropy-coded data lies (after
    /// the SOS segment, up to the closing EOI).
    static func layout(_ s: [UInt8]) throws(MediaError) -> (heightOffset: Int, entropy: Range<Int>) {
        guard s.count >= 4, s[0] == 0xFF, s[1] == 0xD8, s[s.count - 2] == 0xFF, s[s.count - 1] == 0xD9 else {
            throw MediaError(.codec, "JPEG strip: not a whole JPEG stream")
        }
        var at = 2
        var heightOffset: Int?
        while at + 4 <= s.count, s[at] == 0xFF {
            let marker = s[at + 1]
            let length = Int(s[at + 2]) << 8 | Int(s[at + 3])
            if marker == 0xC0 { heightOffset = at + 5 }  // FF C0, length, precision, height
            if marker == 0xDA {
                let start = at + 2 + length
                guard let heightOffset, start <= s.count - 2 else { break }
                return (heightOffset, start..<(s.count - 2))
            }
            at += 2 + length
        }
        throw MediaError(.codec, "JPEG strip: no baseline frame and scan found")
    }
}
