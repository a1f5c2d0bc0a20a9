import CX11
import Config
import Glibc
import Kit
import Support

/// Xlib's default protocol-error handler prints and exits the process (a remote server refusing
/// XShmAttach would kill the node). This handler records the error for the Display it came from
/// instead; each Display is used by one thread at a time, so the owner reads back exactly its own.
/// The handler is process-wide (XSetErrorHandler has no per-Display form) and only records; the
/// screen capture and the canvas window control share it.
public enum X11ErrorTrap {
    private static let codes = Locked<[UInt: Int32]>([:])
    private static let installed: Void = { _ = XSetErrorHandler(record) }()

    public static func install() { _ = installed }

    /// Forgets earlier errors of `display`.
    public static func reset(_ display: OpaquePointer) { _ = codes.withLock { $0.removeValue(forKey: key(display)) } }

    /// The first error code `display` got since the last reset (0 = none).
    public static func code(_ display: OpaquePointer) -> Int32 { codes.withLock { $0[key(display)] ?? 0 } }

    private static func key(_ display: OpaquePointer) -> UInt { UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(display))) }

    private static let record: @convention(c) (OpaquePointer?, UnsafeMutablePointer<XErrorEvent>?) -> Int32 = { display, event in
        guard let display, let event else { return 0 }
        let k = key(display)
        codes.withLock { if $0[k] == nil { $0[k] = Int32(event.pointee.error_code) } }
        return 0
    }
}
