import CZlib
import Glibc
import Support

/// PNG writer on zlib: 8-bit RGB, no interlace, one IDAT chunk per strip. The 24- and 32-bit RGB
/// layouts are read where they are (capture memory) and packed to RGB row by row on the way into
/// deflate; other layouts are converted once to RGB24 by the scaler first. Large images are cut
/// into strips compressed at the same time, one per core (up to 4), since deflate is nearly all
/// of a PNG's cost (`PNGDeflateStrip` has the settings and why).
public enum PNGEncoder {
    public static func encode(_ image: PixelView) throws(MediaError) -> [UInt8] {
        try encode(image, strips: nil)
    }

    /// `strips` overrides the count `strips(rawBytes:rows:)` picks (tests: seams on any machine).
    static func encode(_ image: PixelView, strips wanted: Int?) throws(MediaError) -> [UInt8] {
        guard let packer = RGBRowPacker(image.layout) else {
            let converted = try ImageScaler(filter: .area).convert(image, width: image.width, height: image.height, layout: .rgb24)
            return try encode(converted.view, strips: wanted)
        }
        let rowBytes = 1 + image.width * 3
        let stripCount = min(image.height, max(1, wanted ?? strips(rawBytes: rowBytes * image.height, rows: image.height)))
        let parts = (0..<stripCount).map { _ in PNGDeflateStrip() }
        let job = StripJob(image: image, packer: packer, parts: parts)
        BlockingExecutor.fanOut("png-deflate", count: stripCount) { i in
            let rows = (job.image.height * i / stripCount)..<(job.image.height * (i + 1) / stripCount)
            job.parts[i].compress(job.image, packer: job.packer, rows: rows, last: i == stripCount - 1)
        }
        if let failure = parts.lazy.compactMap(\.failure).first { throw MediaError(.codec, "PNG encoding failed: \(failure)") }
        return assemble(width: image.width, height: image.height, parts: parts)
    }

    /// One strip per core, up to 4, none under 1 MiB of image data: past that the thread and the
    /// seam cost more than they save.
    static func strips(rawBytes: Int, rows: Int) -> Int {
        let cores = max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
        return max(1, min(cores, 4, rawBytes / (1 << 20), rows))
    }

    /// Signature, IHDR, the strips' IDAT chunks (the zlib header in the first, the Adler-32 of
    /// all the image data after the last), IEND.
    private static func assemble(width: Int, height: Int, parts: [PNGDeflateStrip]) -> [UInt8] {
        let total = 8 + (12 + 13) + parts.reduce(0) { $0 + 12 + $1.count } + 2 + 4 + 12
        return [UInt8](unsafeUninitializedCapacity: total) { buffer, initialized in
            var w = ChunkWriter(buffer.baseAddress!)
            w.bytes([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
            w.chunk("IHDR", length: 13) { w in
                w.be32(UInt32(width)); w.be32(UInt32(height))
                w.bytes([8, 2, 0, 0, 0])  // 8 bits per sample, RGB, deflate, adaptive filtering, no interlace
            }
            var adler = parts[0].adler
            for part in parts.dropFirst() { adler = adler32_combine(adler, part.adler, part.rawLength) }
            for (i, part) in parts.enumerated() {
                let first = i == 0, last = i == parts.count - 1
                w.chunk("IDAT", length: part.count + (first ? 2 : 0) + (last ? 4 : 0)) { w in
                    if first { w.bytes([0x78, 0x01]) }  // deflate, 32 KiB window, "fastest" level
                    if let bytes = part.bytes { w.raw(bytes, part.count) }
                    if last { w.be32(UInt32(truncatingIfNeeded: adler)) }
                }
            }
            w.chunk("IEND", length: 0) { _ in }
            initialized = w.written
        }
    }
}

/// What every strip's thread reads: the image (capture memory, unchanged while they run) and its
/// own `PNGDeflateStrip`, which only that thread writes until `fanOut` returns.
private struct StripJob: @unchecked Sendable {
    let image: PixelView
    let packer: RGBRowPacker
    let parts: [PNGDeflateStrip]
}

/// Writes PNG chunks (big-endian length, type, data, CRC-32 of type and data) into memory sized for them.
private struct ChunkWriter {
    private let base: UnsafeMutablePointer<UInt8>
    private(set) var written = 0

    init(_ base: UnsafeMutablePointer<UInt8>) { self.base = base }

    mutating func bytes(_ b: [UInt8]) { for x in b { base[written] = x; written += 1 } }
    mutating func raw(_ p: UnsafePointer<UInt8>, _ n: Int) { (base + written).update(from: p, count: n); written += n }
    mutating func be32(_ v: UInt32) { bytes([UInt8(v >> 24), UInt8(v >> 16 & 0xff), UInt8(v >> 8 & 0xff), UInt8(v & 0xff)]) }

    mutating func chunk(_ type: StaticString, length: Int, _ data: (inout ChunkWriter) -> Void) {
        be32(UInt32(length))
        let start = written
        raw(type.utf8Start, 4)
        data(&self)
        precondition(written - start == 4 + length, "PNG chunk \(type) is not \(length) bytes")
        be32(UInt32(crc32(0, base + start, UInt32(written - start))))
    }
}
