import CPNG
import Glibc

/// libpng's simplified writer (no setjmp). Takes 8-bit RGB/RGBA rows; other layouts are converted
/// once to RGB24 by the caller's scaler (`StillImageEncoder` does that as part of resizing).
public enum PNGEncoder {
    public static func encode(_ image: PixelView) throws(MediaError) -> [UInt8] {
        let format: png_uint_32
        switch image.layout {
        case .rgb24: format = cpng_format_rgb()
        default:
            let converted = try ImageScaler(filter: .area).convert(image, width: image.width, height: image.height, layout: .rgb24)
            return try encode(converted.view)
        }
        var png = png_image()
        png.version = png_uint_32(PNG_IMAGE_VERSION)
        png.width = png_uint_32(image.width)
        png.height = png_uint_32(image.height)
        png.format = format
        var capacity = cpng_size_max(&png)
        var out = [UInt8](repeating: 0, count: capacity)
        let ok = out.withUnsafeMutableBytes { raw in
            png_image_write_to_memory(&png, raw.baseAddress, &capacity, 0, image.base,
                                      png_int_32(image.bytesPerRow), nil)
        }
        defer { png_image_free(&png) }
        guard ok != 0 else {
            let message = withUnsafeBytes(of: png.message) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            throw MediaError(.codec, "PNG encoding failed: \(message)")
        }
        out.removeSubrange(capacity...)
        return out
    }
}
