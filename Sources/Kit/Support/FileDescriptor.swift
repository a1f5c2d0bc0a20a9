import Glibc

/// A file descriptor with exactly one owner: it is closed once — by `close()`, which reports the
/// error, or else when its owner goes away — and never after it was handed on with `release()`.
/// It cannot be copied, so two owners cannot close it twice or use it after the other closed it.
/// Sendable: a number and the (Sendable) calls it goes through; what threads may do with one
/// descriptor at once is the owner's rule, as with the number itself.
public struct FileDescriptor: ~Copyable, Sendable {
    private var fd: Int32
    private let io: SystemIO

    /// Takes ownership of `fd` (an open descriptor this code alone closes).
    public init(owning fd: Int32, io: SystemIO = .live) {
        self.fd = fd
        self.io = io
    }

    /// Opens `path` with open(2) (O_CLOEXEC added), retrying on EINTR.
    public static func open(_ path: String, _ flags: Int32, mode: mode_t = 0, io: SystemIO = .live) throws(Errno) -> FileDescriptor {
        while true {
            let fd = Glibc.open(path, flags | O_CLOEXEC, mode)
            if fd >= 0 { return FileDescriptor(owning: fd, io: io) }
            let e = Errno.current
            if e != .interrupted { throw e }
        }
    }

    /// The number, for calls this type does not wrap (valid while this value lives).
    public var rawValue: Int32 { fd }

    public func writeAll(_ bytes: [UInt8], socket: Bool = false, timeoutMs: Int32? = nil) throws(Errno) {
        try io.writeAll(fd, bytes, socket: socket, timeoutMs: timeoutMs)
    }

    public func read(into: UnsafeMutableRawBufferPointer, timeoutMs: Int32? = nil) throws(Errno) -> Int {
        try io.read(fd, into: into, timeoutMs: timeoutMs)
    }

    public func readExactly(_ count: Int, timeoutMs: Int32? = nil) throws(SystemIO.ReadFailure) -> [UInt8] {
        try io.readExactly(fd, count, timeoutMs: timeoutMs)
    }

    /// Closes it now and says whether that failed (a write-back error shows here). Not retried on
    /// EINTR: on Linux the descriptor is closed whatever close(2) returns.
    public consuming func close() throws(Errno) {
        let number = fd
        fd = -1
        if let e = io.calls.close(number) { throw e }
    }

    /// Hands the descriptor on (to C code or another owner) without closing it.
    public consuming func release() -> Int32 {
        let number = fd
        fd = -1
        return number
    }

    deinit {
        if fd >= 0 { _ = io.calls.close(fd) }
    }
}
