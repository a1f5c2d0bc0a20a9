import CPNG
import CTurboJPEG
import Glibc

/// A decoded image as tightly packed RGB bytes (tests compare pixels with it; re-encoders read it).
public struct DecodedImage: Sendable {
    public let width: Int
    public let height: Int
    public let rgb: [UInt8]

    public func pixel(x: Int, y: Int) -> (r: UInt8, g: UInt8, b: UInt8) {
        let i = (y * width + x) * 3
        return (rgb[i], rgb[i + 1], rgb[i + 2])
    }
}

/// JPEG (TurboJPEG) and PNG (libpng simplified API) decoding to RGB.
public enum ImageDecoder {
    public static func decodeJPEG(_ data: [UInt8]) throws(MediaError) -> DecodedImage {
        guard let handle = tjInitDecompress() else { throw MediaError(.codec, "tjInitDecompress failed") }
        defer { tjDestroy(handle) }
        var width: Int32 = 0, height: Int32 = 0, subsamp: Int32 = 0, colorspace: Int32 = 0
        let header = data.withUnsafeBytes { raw in
            tjDecompressHeader3(handle, raw.bindMemory(to: UInt8.self).baseAddress, UInt(data.count),
                                &width, &height, &subsamp, &colorspace)
        }
        guard header == 0, width > 0, height > 0 else {
            throw MediaError(.codec, "not a JPEG: \(String(cString: tjGetErrorStr2(handle)))")
        }
        var rgb = [UInt8](repeating: 0, count: Int(width) * Int(height) * 3)
        let rc = data.withUnsafeBytes { raw in
            rgb.withUnsafeMutableBufferPointer { out in
                tjDecompress2(handle, raw.bindMemory(to: UInt8.self).baseAddress, UInt(data.count), out.baseAddress,
                              width, 0, height, Int32(TJPF_RGB.rawValue), TJFLAG_ACCURATEDCT)
            }
        }
        guard rc == 0 else { throw MediaError(.codec, "JPEG decoding failed: \(String(cString: tjGetErrorStr2(handle)))") }
        return DecodedImage(width: Int(width), height: Int(height), rgb: rgb)
    }

    public static func decodePNG(_ data: [UInt8]) throws(MediaError) -> DecodedImage {
        var png = png_image()
        png.version = png_uint_32(PNG_IMAGE_VERSION)
        defer { png_image_free(&png) }
        let begun = data.withUnsafeBytes { raw in png_image_begin_read_from_memory(&png, raw.baseAddress, raw.count) }
        guard begun != 0 else { throw MediaError(.codec, "not a PNG") }
        png.format = cpng_format_rgb()
        let width = Int(png.width), height = Int(png.height)
        var rgb = [UInt8](repeating: 0, count: width * height * 3)
        let ok = rgb.withUnsafeMutableBytes { out in png_image_finish_read(&png, nil, out.baseAddress, png_int_32(width * 3), nil) }
        guard ok != 0 else { throw MediaError(.codec, "PNG decoding failed") }
        return DecodedImage(width: width, height: height, rgb: rgb)
    }
}
