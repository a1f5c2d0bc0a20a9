import Glibc

/// The few system calls the I/O helpers (SystemIO, FileDescriptor) make, as values: the kernel's by
/// default, and in tests a stand-in that fails as the kernel may — EINTR, EAGAIN, a short write, a
/// short read — so the retry rules are tested without waiting for a signal or a full pipe to
/// happen. Each returns what the call returns, with the errno as the kernel would leave it.
public struct SystemCalls: Sendable {
    /// read(2): bytes read, 0 at end of file, -1 with `errno` set.
    public var read: @Sendable (_ fd: Int32, _ into: UnsafeMutableRawPointer, _ count: Int) -> (Int, Errno?)
    /// write(2), or send(2) with MSG_NOSIGNAL on a socket (a peer gone is EPIPE, not SIGPIPE).
    public var write: @Sendable (_ fd: Int32, _ from: UnsafeRawPointer, _ count: Int, _ socket: Bool) -> (Int, Errno?)
    /// poll(2) on one descriptor: whether it became ready for `events` within `timeoutMs` (-1: no limit).
    public var poll: @Sendable (_ fd: Int32, _ events: Int16, _ timeoutMs: Int32) -> (ready: Bool, Errno?)
    /// close(2).
    public var close: @Sendable (_ fd: Int32) -> Errno?

    public init(read: @escaping @Sendable (Int32, UnsafeMutableRawPointer, Int) -> (Int, Errno?),
                write: @escaping @Sendable (Int32, UnsafeRawPointer, Int, Bool) -> (Int, Errno?),
                poll: @escaping @Sendable (Int32, Int16, Int32) -> (ready: Bool, Errno?),
                close: @escaping @Sendable (Int32) -> Errno?) {
        self.read = read; self.write = write; self.poll = poll; self.close = close
    }

    /// The kernel's.
    public static let live = SystemCalls(
        read: { fd, buf, n in
            let r = Glibc.read(fd, buf, n)
            return (r, r < 0 ? .current : nil)
        },
        write: { fd, buf, n, socket in
            let r = socket ? Glibc.send(fd, buf, n, Int32(MSG_NOSIGNAL)) : Glibc.write(fd, buf, n)
            return (r, r < 0 ? .current : nil)
        },
        poll: { fd, events, timeout in
            var p = pollfd(fd: fd, events: events, revents: 0)
            let r = Glibc.poll(&p, 1, timeout)
            return (r > 0, r < 0 ? .current : nil)
        },
        close: { fd in Glibc.close(fd) == 0 ? nil : .current })
}
