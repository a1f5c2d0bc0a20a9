
/// Result of one non-blocking read or write.
public enum IOStep: Sendable {
    case bytes(Int)
    /// Nothing moved; wait until the fd is readable (`wantWrite == false`) or writable.
    case wouldBlock(wantWrite: Bool)
    case eof
    case failed(String)
}

/// A non-blocking byte stream over one socket fd: plain TCP (here) or TLS on top of it (the
/// runtime's transport).
public protocol ByteStream: AnyObject {
    var fd: Int32 { get }
    func read(_ buf: UnsafeMutableRawBufferPointer) -> IOStep
    func write(_ buf: UnsafeRawBufferPointer) -> IOStep
    /// Bytes already decrypted and waiting (poll on the fd would not report them).
    var hasBufferedInput: Bool { get }
    func close()
}

public struct TransportError: Error, Sendable, CustomStringConvertible {
    public let description: String
    /// The system call's errno, where one failed (a caller may try again on ECONNREFUSED).
    public let errno: Errno?
    public init(_ d: String, errno: Errno? = nil) { description = d; self.errno = errno }
}
