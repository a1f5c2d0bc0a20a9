import Glibc

/// A self-pipe that interrupts the watch thread's poll(): `stop()` and "reconnect now" must not
/// wait for a read timeout or a backoff sleep to run out. Owned by one `GpsdWatcher`; both ends
/// are closed once, in deinit. (eventfd would do, but Glibc's Swift module does not export it.)
final class Wakeup: @unchecked Sendable {
    /// The read end, polled by `LineSocket.wait` and `sleep`; never closed elsewhere.
    let fd: Int32
    private let writeEnd: Int32

    init() {
        var fds: [Int32] = [-1, -1]
        let rc = pipe(&fds)
        precondition(rc == 0, "pipe: \(String(cString: strerror(errno)))")
        for f in fds {
            _ = fcntl(f, F_SETFD, FD_CLOEXEC)
            _ = fcntl(f, F_SETFL, fcntl(f, F_GETFL) | O_NONBLOCK)
        }
        fd = fds[0]
        writeEnd = fds[1]
    }

    deinit { close(fd); close(writeEnd) }

    /// Never blocks: when the pipe is full, a wake-up is already pending.
    func signal() {
        var one: UInt8 = 1
        _ = write(writeEnd, &one, 1)
    }

    /// Consumes pending signals (after poll() reported the fd readable).
    func drain() {
        var buf = [UInt8](repeating: 0, count: 64)
        while read(fd, &buf, buf.count) > 0 {}
    }

    /// Sleeps up to `duration`; returns early (true) when signalled.
    @discardableResult
    func sleep(_ duration: Duration) -> Bool {
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

    /// poll()'s timeout argument, rounded up so a short wait is never a busy loop.
    static func milliseconds(_ d: Duration) -> Int32 {
        let (s, atto) = d.components
        let ms = s * 1000 + (atto + 999_999_999_999_999) / 1_000_000_000_000_000
        return Int32(max(0, min(ms, 3_600_000)))
    }
}
