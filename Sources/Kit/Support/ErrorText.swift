import FoundationEssentials
import Glibc

/// What went wrong, in words a person can act on: the C library's message for POSIX errors (also
/// when wrapped in FileManager's CocoaError), else the error's own description.
public func describe(_ error: any Error) -> String {
    if let p = error as? POSIXError { return String(cString: strerror(p.code.rawValue)) }
    if let c = error as? CocoaError {
        if let p = c.userInfo["NSUnderlyingError"] as? POSIXError { return String(cString: strerror(p.code.rawValue)) }
        switch c.code {
        case .fileNoSuchFile, .fileReadNoSuchFile: return "no such file"
        case .fileReadNoPermission, .fileWriteNoPermission: return "permission denied"
        case .fileWriteOutOfSpace: return "no space left on device"
        default: return "error \(c.code.rawValue)"
        }
    }
    return "\(error)"
}
