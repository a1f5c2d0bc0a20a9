import Glibc

/// A self-pipe that interrupts a thread blocked in poll(): the node's way to wait on a file
/// descriptor and still stop at once (a `stop()`, "reconnect now", a raised `CancelFlag` via
/// `CancelFlag.wakes(_:)`), instead of polling with a short timeout to check a flag. Both ends are
/// closed once, when it goes. (eventfd would do, but Glibc's Swift module does not export it.)
public final class Wakeup: Sendable {
    /// The read end, polled next to the fd being waited on; never closed elsewhere.
    public var fd: Int32 { readEnd.rawValue }
    private let readEnd: FileDescriptor
    private let writeEnd: FileDescriptor

    public init() {
        var fds: [Int32] = [-1, -1]
        let rc = pipe(&fds)
        precondition(rc == 0, "pipe: \(String(cString: strerror(errno)))")
        for f in fds {
            _ = fcntl(f, F_SETFD, FD_CLOEXEC)
            _ = fcntl(f, F_SETFL, fcntl(f, F_GETFL) | O_NONBLOCK)
        }
        readEnd = FileDescriptor(owning: fds[0])
        writeEnd = FileDescriptor(owning: fds[1])
    }

    /// Never blocks: when the pipe is full, a wake-up is already pending.
    public func signal() {
        var one: UInt8 = 1
        _ = write(writeEnd.rawValue, &one, 1)
    }

    /// Consumes pending signals (after poll() reported the fd readable).
    public func drain() {
        var buf = [UInt8](repeating: 0, count: 64)
        while read(fd, &buf, buf.count) > 0 {}
    }

    /// Whether a signal is pending (it stays pending: a stop is seen by every later wait too).
    public var isSignalled: Bool {
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&p, 1, 0) > 0
    }

    /// Sleeps up to `duration`; returns early (true) when signalled.
    @discardableResult
    public func sleep(_ duration: Duration) -> Bool {
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let deadline = ContinuousClock.now + duration
        while true {
            let left = deadline - .now
            if left <= .zero { return false }
            let rc = poll(&p, 1, Wakeup.milliseconds(left))
            if rc < 0 && errno == EINTR { continue }
            if rc > 0 { drain(); return true }
            if rc == 0 && ContinuousClock.now >= deadline { return false }
        }
    }

    public enum WaitResult: Sendable, Equatable {
        /// `fd` has the events asked for (or an error or hang-up: the caller's read will say).
        case ready
        /// Signalled; the signal is left pending, so a stop is seen by every later wait.
        case woken
        case timedOut
    }

    /// Waits until `fd` has `events`, this wake-up is signalled, or `timeout` runs out (nil: no
    /// limit). One poll() on both fds: no timeout is needed to notice a stop.
    public func wait(for fd: Int32, events: Int16 = Int16(POLLIN), timeout: Duration? = nil) -> WaitResult {
        var fds = [pollfd(fd: self.fd, events: Int16(POLLIN), revents: 0),
                   pollfd(fd: fd, events: events, revents: 0)]
        let deadline = timeout.map { ContinuousClock.now + $0 }
        while true {
            var ms: Int32 = -1
            if let deadline {
                let left = deadline - .now
                if left <= .zero { return .timedOut }
                ms = Wakeup.milliseconds(left)
            }
            let rc = poll(&fds, 2, ms)
            if rc < 0 && errno == EINTR { continue }
            if rc < 0 { return .ready }  // let the caller's read report the error
            if fds[0].revents != 0 { return .woken }
            if fds[1].revents != 0 { return .ready }
        }
    }

    /// poll()'s timeout argument, rounded up so a short wait is never a busy loop.
    public static func milliseconds(_ d: Duration) -> Int32 {
        let (s, atto) = d.components
        let ms = s * 1000 + (atto + 999_999_999_999_999) / 1_000_000_000_000_000
        return Int32(max(0, min(ms, 3_600_000)))
    }
}
