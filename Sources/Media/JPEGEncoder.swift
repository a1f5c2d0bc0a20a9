import CJPEG
import Glibc
import Support

/// Baseline JPEG (4:2:0, fast integer DCT, standard Huffman tables) through libjpeg-turbo. Reads
/// 24/32-bit RGB layouts in place (no conversion copy); other layouts (RGB565, YUYV) are converted
/// to BGRX once. A large image is cut into horizontal strips encoded at the same time, one per
/// core, and joined into one stream at restart markers (`JPEGStrips`): at 1080p, encoding is most
/// of a snapshot's time after the capture itself. One instance is used by one thread at a time.
public final class JPEGEncoder {
    private lazy var converter = ImageScaler(filter: .area)

    public init() throws(MediaError) {}

    /// Encodes `image` at `quality` (1...100).
    public func encode(_ image: PixelView, quality: Int) throws(MediaError) -> [UInt8] {
        try encode(image, quality: quality, strips: nil)
    }

    /// `strips` overrides the count `JPEGStrips.count(width:height:)` picks (tests: joins on any machine).
    func encode(_ image: PixelView, quality: Int, strips wanted: Int?) throws(MediaError) -> [UInt8] {
        guard let colorSpace = image.layout.jpegColorSpace else {
            let converted = try converter.convert(image, width: image.width, height: image.height, layout: .bgrx)
            return try encode(converted.view, quality: quality, strips: wanted)
        }
        let plan = JPEGStrips(width: image.width, height: image.height,
                              count: wanted ?? JPEGStrips.count(width: image.width, height: image.height))
        let q = min(100, max(1, quality))
        guard plan.rows.count > 1 else {
            return try Self.compress(image, rows: 0..<image.height, colorSpace: colorSpace, quality: q, restartInterval: 0)
        }
        let job = JPEGStripJob(image: image, plan: plan, colorSpace: colorSpace, quality: q,
                               results: Locked(Array(repeating: nil, count: plan.rows.count)))
        BlockingExecutor.fanOut("jpeg-strip", count: plan.rows.count) { i in
            let result = Result { () throws(MediaError) in
                try Self.compress(job.image, rows: job.plan.rows[i], colorSpace: job.colorSpace, quality: job.quality,
                                  restartInterval: job.plan.restartInterval)
            }
            job.results.update { $0[i] = result }
        }
        var streams: [[UInt8]] = []
        for result in job.results.withLock({ $0 }) {
            guard let result else { throw MediaError(.codec, "JPEG encoding failed: a strip did not finish") }
            streams.append(try result.get())
        }
        return try plan.join(streams)
    }

    /// One libjpeg compression of `rows` of `image`, with a restart marker every `restartInterval` MCUs.
    static func compress(_ image: PixelView, rows: Range<Int>, colorSpace: J_COLOR_SPACE, quality: Int,
                                 restartInterval: Int) throws(MediaError) -> [UInt8] {
        var out: UnsafeMutablePointer<UInt8>?
        var size: UInt = 0
        var message = [CChar](repeating: 0, count: 256)
        let first = image.base.assumingMemoryBound(to: UInt8.self) + rows.lowerBound * image.bytesPerRow
        let rc = ocn_jpeg_compress(first, UInt32(image.width), UInt32(rows.count), image.bytesPerRow,
                                   Int32(colorSpace.rawValue), Int32(quality), UInt32(restartInterval),
                                   &out, &size, &message, message.count)
        guard rc == 0, let out else {
            let text = message.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
            throw MediaError(.codec, "JPEG encoding failed: \(text)")
        }
        defer { free(out) }
        return Array(UnsafeBufferPointer(start: out, count: Int(size)))
    }
}

/// What every strip's thread reads (the image, unchanged while they run) and the one slot each writes.
private struct JPEGStripJob: @unchecked Sendable {
    let image: PixelView
    let plan: JPEGStrips
    let colorSpace: J_COLOR_SPACE
    let quality: Int
    let results: Locked<[Result<[UInt8], MediaError>?]>
}
