import CZlib
import Glibc

/// One horizontal strip of a PNG's image data, compressed as a piece of raw deflate that the
/// pieces before and after it join into one zlib stream: each strip starts with the 32 KiB of
/// image data before it as its dictionary (what a decoder's window holds there, so matches across
/// the seam still work) and ends byte-aligned (a sync flush), or with the final block when last.
/// The strips of one image are compressed on separate threads (`PNGEncoder`).
final class PNGDeflateStrip {
    /// Compressed bytes, `count` of them; nil when zlib failed (`failure` says why).
    private(set) var bytes: UnsafeMutablePointer<UInt8>?
    private(set) var count = 0
    /// Adler-32 of this strip's uncompressed data, and its length, for the stream's trailer.
    private(set) var adler: UInt = 0
    private(set) var rawLength = 0
    private(set) var failure: String?

    deinit { free(bytes) }

    /// Filter type 0 (None) on every row at zlib level 1, the default strategy. On an editor-like
    /// 1920x1080 screen this was both the fastest and the smallest of None/Sub/Up/Paeth/per-row
    /// minimum-sum at levels 1-3 and of Z_RLE/Z_FILTERED (141 KB; Sub or Up 159 KB, Z_RLE 230-540
    /// KB); level 6, libpng's default, made 112 KB at twice the time. Flat UI and text repeat
    /// whole runs of pixels, which LZ77 finds in the unfiltered bytes; a photo wallpaper would
    /// compress about a tenth better with Up, not worth a filter pass on every screen.
    static let level: Int32 = 1

    func compress(_ image: PixelView, packer: RGBRowPacker, rows: Range<Int>, last: Bool) {
        let rowBytes = 1 + image.width * 3
        var z = z_stream()
        guard czlib_deflate_init_raw(&z, Self.level, Z_DEFAULT_STRATEGY) == Z_OK else {
            failure = "deflateInit2 failed"
            return
        }
        defer { deflateEnd(&z) }
        // Rows are packed in batches of about 64 KiB: few deflate calls, a buffer that stays in cache.
        let batchRows = max(1, (64 << 10) / rowBytes)
        let batch = UnsafeMutablePointer<UInt8>.allocate(capacity: batchRows * rowBytes)
        defer { batch.deallocate() }
        func packRows(_ range: Range<Int>) {
            for (i, y) in range.enumerated() {
                let row = batch + i * rowBytes
                row[0] = 0  // filter type None
                packer.pack(image.base + y * image.bytesPerRow, into: row + 1, width: image.width)
            }
        }

        if rows.lowerBound > 0 {
            let window = 32 << 10
            let before = min(rows.lowerBound, batchRows, (window + rowBytes - 1) / rowBytes)
            packRows((rows.lowerBound - before)..<rows.lowerBound)
            let length = min(window, before * rowBytes)
            guard deflateSetDictionary(&z, batch + before * rowBytes - length, UInt32(length)) == Z_OK else {
                failure = "deflateSetDictionary failed"
                return
            }
        }

        rawLength = rows.count * rowBytes
        // The worst case for the whole strip, plus the sync flush's empty block: one call per
        // batch never runs out of room. Only the pages deflate writes are ever touched.
        let capacity = Int(deflateBound(&z, UInt(rawLength))) + 64
        guard let out = malloc(capacity)?.assumingMemoryBound(to: UInt8.self) else {
            failure = "cannot allocate \(capacity) bytes"
            return
        }
        bytes = out
        z.next_out = out
        z.avail_out = UInt32(capacity)
        var sum = adler32(0, nil, 0)
        var y = rows.lowerBound
        while y < rows.upperBound {
            let n = min(batchRows, rows.upperBound - y)
            packRows(y..<(y + n))
            y += n
            let length = n * rowBytes
            sum = adler32(sum, batch, UInt32(length))
            z.next_in = batch
            z.avail_in = UInt32(length)
            let flush = y < rows.upperBound ? Z_NO_FLUSH : (last ? Z_FINISH : Z_SYNC_FLUSH)
            let rc = deflate(&z, flush)
            // Room left over is what says a sync flush is complete (zlib: call again while
            // avail_out is 0); the bound above leaves room, so this only catches a zlib surprise.
            guard rc == (flush == Z_FINISH ? Z_STREAM_END : Z_OK), z.avail_in == 0, z.avail_out > 0 else {
                failure = "deflate returned \(rc)"
                return
            }
        }
        count = capacity - Int(z.avail_out)
        adler = sum
    }
}
