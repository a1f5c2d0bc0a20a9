import Glibc

public enum StillImageFormat: Sendable, Equatable {
    /// quality 1...100
    case jpeg(quality: Int)
    case png

    public var name: String {
        switch self {
        case .jpeg: return "jpeg"
        case .png: return "png"
        }
    }
}

public struct EncodedImage: Sendable {
    public let data: [UInt8]
    public let width: Int
    public let height: Int
    public let format: StillImageFormat
}

/// The still-image path shared by screen.snapshot and camera.snap: fit to maxWidth, encode, and
/// keep the base64 text under a byte budget by lowering JPEG quality and then the size.
/// When no resize is needed and TurboJPEG reads the layout, the source memory is encoded in place.
public final class StillImageEncoder {
    private let jpeg: JPEGEncoder
    private let scaler = ImageScaler(filter: .area)

    /// Smallest quality the budget loop goes down to before it starts shrinking the image.
    static let qualityFloor = 40

    public init() throws(MediaError) { jpeg = try JPEGEncoder() }

    public func encode(_ image: PixelView, format: StillImageFormat, maxWidth: Int?,
                       maxBase64Bytes: Int) throws(MediaError) -> EncodedImage {
        var size = ImageSize.fitting(width: image.width, height: image.height, maxWidth: maxWidth)
        var quality: Int? = nil
        if case .jpeg(let q) = format { quality = q }
        var resized: PixelBuffer? = nil
        while true {
            let source: PixelView
            if size.width == image.width && size.height == image.height {
                source = image  // in place; the encoders convert layouts they cannot read themselves
            } else {
                // Resize once per size (a quality retry reuses it), into what the encoder reads best.
                if resized == nil || resized!.width != size.width || resized!.height != size.height {
                    resized = try scaler.convert(image, width: size.width, height: size.height,
                                                 layout: quality == nil ? .rgb24 : .bgrx)
                }
                source = resized!.view
            }
            let data: [UInt8]
            if let q = quality { data = try jpeg.encode(source, quality: q) } else { data = try PNGEncoder.encode(source) }
            if Base64Size.of(data.count) <= maxBase64Bytes {
                return EncodedImage(data: data, width: size.width, height: size.height,
                                    format: quality.map { .jpeg(quality: $0) } ?? .png)
            }
            if let q = quality, q > StillImageEncoder.qualityFloor {
                quality = max(StillImageEncoder.qualityFloor, q * 3 / 4)
                continue
            }
            let smaller = (width: size.width * 3 / 4, height: size.height * 3 / 4)
            guard smaller.width >= 16, smaller.height >= 16 else {
                throw MediaError(.tooLarge, "the image does not fit in \(maxBase64Bytes) bytes of base64 even at \(size.width)x\(size.height)")
            }
            size = smaller
        }
    }
}

public enum Base64Size {
    /// Length of the padded base64 text for `byteCount` bytes.
    public static func of(_ byteCount: Int) -> Int { (byteCount + 2) / 3 * 4 }

    /// Largest byte count whose base64 text fits in `base64Bytes`.
    public static func rawBytes(fitting base64Bytes: Int) -> Int { max(0, base64Bytes / 4 * 3) }
}
