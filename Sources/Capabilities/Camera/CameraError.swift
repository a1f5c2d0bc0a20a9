import Config
import Glibc
import Kit
import Media
import Support

/// The camera capability's error codes (docs/PROTOCOL.md §6.2 naming).
enum CameraError {
    static let busyCode: NodeError.Code = "CAMERA_BUSY"
    static let permissionRequired: NodeError.Code = "CAMERA_PERMISSION_REQUIRED"

    static func unavailable(_ what: String) -> NodeError { NodeError(.unavailable("camera"), what) }

    static func busy(_ what: String) -> NodeError { NodeError(busyCode, what, retryable: true) }

    static func permission(_ path: String) -> NodeError {
        NodeError(permissionRequired,
                  "no permission to open \(path); add the node's user to the video group (sudo usermod -aG video $USER) and log in again")
    }

    static func tooLarge(_ what: String) -> NodeError { PayloadBudget.tooLarge(what) }

    static func cancelled() -> NodeError { NodeError(.cancelled, "the camera command was cancelled") }

    /// An errno from open/ioctl on `path`, mapped to what the caller can do about it.
    static func errno(_ code: Int32, _ path: String, _ doing: String) -> NodeError {
        switch code {
        case EACCES, EPERM: return permission(path)
        case EBUSY: return busy("\(path) is in use by another application (\(doing))")
        case ENOENT, ENODEV, ENXIO, EIO:
            return unavailable("\(path) is gone (\(doing): \(String(cString: strerror(code))))")
        default: return unavailable("\(doing) on \(path) failed: \(String(cString: strerror(code)))")
        }
    }

    static func media(_ e: MediaError) -> NodeError {
        switch e.kind {
        case .tooLarge: return tooLarge(e.description)
        case .unsupported, .codec: return unavailable(e.description)
        }
    }
}
