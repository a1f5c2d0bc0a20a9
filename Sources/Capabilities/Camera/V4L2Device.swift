import CV4L2
import Config
import Glibc
import Kit
import Media
import Support

/// The pixel formats the camera reads; others a device offers are ignored.
enum CameraPixelFormat: String, Sendable, CaseIterable {
    case yuyv = "YUYV"
    case nv12 = "NV12"
    case mjpeg = "MJPG"

    var fourcc: UInt32 {
        switch self {
        case .yuyv: return cv4l2_fourcc_yuyv()
        case .nv12: return cv4l2_fourcc_nv12()
        case .mjpeg: return cv4l2_fourcc_mjpeg()
        }
    }

    /// How a raw frame sits in the mmap'd buffer; nil for compressed (MJPEG) frames.
    var rawLayout: PixelLayout? {
        switch self {
        case .yuyv: return .yuyv
        case .nv12: return .nv12
        case .mjpeg: return nil
        }
    }

    init?(fourcc: UInt32) {
        if fourcc == cv4l2_fourcc_yuyv() { self = .yuyv }
        else if fourcc == cv4l2_fourcc_nv12() { self = .nv12 }
        // Some UVC cameras call the same stream JPEG instead of MJPG.
        else if fourcc == cv4l2_fourcc_mjpeg() || fourcc == cv4l2_fourcc_jpeg() { self = .mjpeg }
        else { return nil }
    }
}

struct FrameSize: Sendable, Hashable, CustomStringConvertible {
    let width: Int
    let height: Int
    var description: String { "\(width)x\(height)" }
}

/// One open V4L2 device node. Owns the descriptor (closed once, when the device goes); a
/// `V4L2Stream` keeps its device alive while it streams.
final class V4L2Device {
    let path: String
    private let descriptor: FileDescriptor
    /// The number, for the ioctls (valid while the device lives).
    var fd: Int32 { descriptor.rawValue }

    init(path: String) throws(NodeError) {
        // Non-blocking so DQBUF never parks the capture thread; poll() does the waiting.
        do throws(Errno) { descriptor = try FileDescriptor.open(path, O_RDWR | O_NONBLOCK) }
        catch { throw CameraError.errno(error.code, path, "open") }
        self.path = path
    }

    /// The card name and whether this node captures video (metadata-only nodes of UVC cameras do not).
    func identity() throws(NodeError) -> (name: String, isCapture: Bool) {
        var cap = v4l2_capability()
        guard cv4l2_querycap(fd, &cap) == 0 else { throw CameraError.errno(errno, path, "VIDIOC_QUERYCAP") }
        let caps = cap.capabilities & UInt32(V4L2_CAP_DEVICE_CAPS) != 0 ? cap.device_caps : cap.capabilities
        let isCapture = caps & UInt32(V4L2_CAP_VIDEO_CAPTURE) != 0 && caps & UInt32(V4L2_CAP_STREAMING) != 0
        let name = withUnsafeBytes(of: cap.card) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
        return (name.isEmpty ? PathName.lastComponent(path) : name, isCapture)
    }

    /// Supported formats with their discrete frame sizes (stepwise ranges contribute their maximum).
    func formats() -> [CameraPixelFormat: [FrameSize]] {
        var result: [CameraPixelFormat: [FrameSize]] = [:]
        for index in 0..<64 {
            var desc = v4l2_fmtdesc()
            desc.index = UInt32(index)
            desc.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
            guard cv4l2_enum_fmt(fd, &desc) == 0 else { break }
            guard let format = CameraPixelFormat(fourcc: desc.pixelformat), result[format] == nil else { continue }
            result[format] = frameSizes(desc.pixelformat)
        }
        return result.filter { !$0.value.isEmpty }
    }

    private func frameSizes(_ fourcc: UInt32) -> [FrameSize] {
        var sizes: [FrameSize] = []
        for index in 0..<64 {
            var s = v4l2_frmsizeenum()
            s.index = UInt32(index)
            s.pixel_format = fourcc
            guard cv4l2_enum_framesizes(fd, &s) == 0 else { break }
            if s.type == V4L2_FRMSIZE_TYPE_DISCRETE.rawValue {
                sizes.append(FrameSize(width: Int(s.discrete.width), height: Int(s.discrete.height)))
            } else {
                sizes.append(FrameSize(width: Int(s.stepwise.max_width), height: Int(s.stepwise.max_height)))
                break
            }
        }
        return sizes
    }
}
