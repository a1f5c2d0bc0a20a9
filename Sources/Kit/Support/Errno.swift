import Glibc

/// A system call's errno, as a value: what failed and why in words (strerror), compared by code.
public struct Errno: Error, Sendable, Equatable, CustomStringConvertible {
    public let code: Int32
    public init(_ code: Int32) { self.code = code }
    /// The calling thread's errno now (read it right after the call that failed).
    public static var current: Errno { Errno(errno) }
    public var description: String { String(cString: strerror(code)) }

    public static let interrupted = Errno(EINTR)
    public static let wouldBlock = Errno(EAGAIN)
    public static let brokenPipe = Errno(EPIPE)
    public static let badDescriptor = Errno(EBADF)
    public static let timedOut = Errno(ETIMEDOUT)
}
