import CFFmpeg
import CJPEG

/// How the pixels of a packed image sit in memory, named by byte order (first byte first).
/// Screen and camera sources describe their memory with one of these so encoders can read it
/// in place; layouts a codec cannot read are converted once by `ImageScaler`.
public enum PixelLayout: Sendable, Equatable, CaseIterable {
    /// B, G, R, unused: X11 ZPixmap depth 24/32 on little-endian, fbdev XRGB8888.
    case bgrx
    /// R, G, B, unused.
    case rgbx
    /// unused, R, G, B.
    case xrgb
    /// unused, B, G, R.
    case xbgr
    case bgr24
    case rgb24
    /// 16-bit little-endian words, red in the top 5 bits (fbdev RGB565).
    case rgb565le
    /// 16-bit little-endian words, blue in the top 5 bits.
    case bgr565le
    /// 16-bit little-endian words, 5 bits per channel, red at bit 10.
    case rgb555le
    /// Packed YUV 4:2:2 (Y0 U Y1 V), the usual raw webcam format.
    case yuyv
    /// Semi-planar YUV 4:2:0: a Y plane, then interleaved U/V at half height with the same row
    /// stride, in one buffer (V4L2 NV12: Raspberry Pi camera stack, many MIPI/ISP drivers).
    case nv12

    /// Where the second plane of a semi-planar layout starts, from the image start; nil when packed.
    public func chromaPlaneOffset(bytesPerRow: Int, height: Int) -> Int? {
        self == .nv12 ? bytesPerRow * height : nil
    }

    /// Bytes a whole image of this layout needs (both planes for NV12).
    public func imageBytes(bytesPerRow: Int, width: Int, height: Int) -> Int {
        let lastRow = bytesPerRow * (height - 1) + width * bytesPerPixel
        guard let chroma = chromaPlaneOffset(bytesPerRow: bytesPerRow, height: height) else { return lastRow }
        let chromaRows = (height + 1) / 2
        return chroma + bytesPerRow * (chromaRows - 1) + ((width + 1) & ~1)
    }

    /// Bytes per pixel of the first plane (luma for NV12).
    public var bytesPerPixel: Int {
        switch self {
        case .nv12: return 1
        case .bgrx, .rgbx, .xrgb, .xbgr: return 4
        case .bgr24, .rgb24: return 3
        case .rgb565le, .bgr565le, .rgb555le, .yuyv: return 2
        }
    }

    /// The libjpeg-turbo input color space that reads this layout directly, if any.
    var jpegColorSpace: J_COLOR_SPACE? {
        switch self {
        case .bgrx: return JCS_EXT_BGRX
        case .rgbx: return JCS_EXT_RGBX
        case .xrgb: return JCS_EXT_XRGB
        case .xbgr: return JCS_EXT_XBGR
        case .bgr24: return JCS_EXT_BGR
        case .rgb24: return JCS_EXT_RGB
        case .rgb565le, .bgr565le, .rgb555le, .yuyv, .nv12: return nil
        }
    }

    /// The libswscale format for conversions and scaling.
    var avPixelFormat: AVPixelFormat {
        switch self {
        case .bgrx: return AV_PIX_FMT_BGR0
        case .rgbx: return AV_PIX_FMT_RGB0
        case .xrgb: return AV_PIX_FMT_0RGB
        case .xbgr: return AV_PIX_FMT_0BGR
        case .bgr24: return AV_PIX_FMT_BGR24
        case .rgb24: return AV_PIX_FMT_RGB24
        case .rgb565le: return AV_PIX_FMT_RGB565LE
        case .bgr565le: return AV_PIX_FMT_BGR565LE
        case .rgb555le: return AV_PIX_FMT_RGB555LE
        case .yuyv: return AV_PIX_FMT_YUYV422
        case .nv12: return AV_PIX_FMT_NV12
        }
    }

    /// Identifies a packed RGB layout from channel bit positions (fbdev `fb_bitfield`s, X11 visual
    /// masks), on a little-endian machine. nil when no layout matches.
    public static func fromChannels(bitsPerPixel: Int, redShift: Int, redBits: Int, greenShift: Int, greenBits: Int,
                                    blueShift: Int, blueBits: Int) -> PixelLayout? {
        switch (bitsPerPixel, redShift, redBits, greenShift, greenBits, blueShift, blueBits) {
        case (32, 16, 8, 8, 8, 0, 8): return .bgrx
        case (32, 0, 8, 8, 8, 16, 8): return .rgbx
        case (32, 8, 8, 16, 8, 24, 8): return .xrgb
        case (32, 24, 8, 16, 8, 8, 8): return .xbgr
        case (24, 16, 8, 8, 8, 0, 8): return .bgr24
        case (24, 0, 8, 8, 8, 16, 8): return .rgb24
        case (16, 11, 5, 5, 6, 0, 5): return .rgb565le
        case (16, 0, 5, 5, 6, 11, 5): return .bgr565le
        case (16, 10, 5, 5, 5, 0, 5): return .rgb555le
        default: return nil
        }
    }
}
