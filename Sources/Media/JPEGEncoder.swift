import CTurboJPEG
import Glibc

/// TurboJPEG compressor. Reads 24/32-bit RGB layouts in place (no conversion copy); other layouts
/// (RGB565, YUYV) are converted to BGRX once. One instance is used by one thread at a time.
public final class JPEGEncoder {
    /// Owned TurboJPEG handle, destroyed in deinit.
    private let handle: tjhandle
    private lazy var converter = ImageScaler(filter: .area)

    public init() throws(MediaError) {
        guard let h = tjInitCompress() else { throw MediaError(.codec, "tjInitCompress failed") }
        handle = h
    }

    deinit { tjDestroy(handle) }

    /// Encodes `image` at `quality` (1...100) with 4:2:0 chroma subsampling.
    public func encode(_ image: PixelView, quality: Int) throws(MediaError) -> [UInt8] {
        guard let format = image.layout.turboJPEGFormat else {
            let converted = try converter.convert(image, width: image.width, height: image.height, layout: .bgrx)
            return try encode(converted.view, quality: quality)
        }
        var jpeg: UnsafeMutablePointer<UInt8>?
        var size: UInt = 0
        let rc = tjCompress2(handle, image.base.assumingMemoryBound(to: UInt8.self), Int32(image.width),
                             Int32(image.bytesPerRow), Int32(image.height), Int32(format.rawValue), &jpeg, &size,
                             Int32(TJSAMP_420.rawValue), Int32(min(100, max(1, quality))), TJFLAG_FASTDCT)
        guard rc == 0, let jpeg else {
            if let jpeg { tjFree(jpeg) }
            throw MediaError(.codec, "JPEG encoding failed: \(String(cString: tjGetErrorStr2(handle)))")
        }
        defer { tjFree(jpeg) }
        return Array(UnsafeBufferPointer(start: jpeg, count: Int(size)))
    }
}
