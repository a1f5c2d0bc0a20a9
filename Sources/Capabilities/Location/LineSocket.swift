import Foundation

/// Why a socket operation failed, in words for logs and error messages.
struct SocketError: Error, CustomStringConvertible {
    let description: String
    init(_ d: String) { description = d }
    static func errno(_ what: String, _ code: Int32 = Glibc.errno) -> SocketError {
        SocketError("\(what): \(String(cString: strerror(code)))")
    }
}

/// A non-blocking TCP connection read as text lines. Used only from the watch thread (never from
/// the cooperative pool): every wait is a poll() that a `Wakeup` can interrupt. The fd never
/// leaves this type and is closed exactly once.
final class LineSocket {
    enum Ready { case readable, woken, timedOut }
    enum ReadResult { case data, eof, failed(String) }

    private var fd: Int32

    private init(fd: Int32) { self.fd = fd }
    deinit { close() }

    /// Resolves `host` and tries each address until one accepts within `timeout`.
    static func connect(host: String, port: Int, timeout: Duration) throws(SocketError) -> LineSocket {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_family = AF_UNSPEC
        var res: UnsafeMutablePointer<addrinfo>?
        let rc = getaddrinfo(host, String(port), &hints, &res)
        guard rc == 0, let first = res else {
            throw SocketError("cannot resolve \(host): \(String(cString: gai_strerror(rc)))")
        }
        defer { freeaddrinfo(first) }
        let deadline = ContinuousClock.now + timeout
        var lastError = SocketError("no address for \(host)")
        var p: UnsafeMutablePointer<addrinfo>? = first
        while let ai = p {
            p = ai.pointee.ai_next
            let fd = socket(ai.pointee.ai_family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
            guard fd >= 0 else { lastError = .errno("socket"); continue }
            let sock = LineSocket(fd: fd)
            var one: Int32 = 1
            setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            if Glibc.connect(fd, ai.pointee.ai_addr, ai.pointee.ai_addrlen) == 0 { return sock }
            guard errno == EINPROGRESS else { lastError = .errno("connect"); continue }
            var pfd = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
            var ready: Int32
            repeat { ready = poll(&pfd, 1, Wakeup.milliseconds(deadline - .now)) } while ready < 0 && errno == EINTR
            guard ready > 0 else { lastError = SocketError("connect: timed out"); continue }
            var err: Int32 = 0
            var len = socklen_t(MemoryLayout<Int32>.size)
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len)
            if err == 0 { return sock }
            lastError = .errno("connect", err)
        }
        throw lastError
    }

    /// Writes all of `text` (a gpsd command is a few dozen bytes; waits at most `timeout`).
    func send(_ text: String, timeout: Duration = .seconds(2)) throws(SocketError) {
        let bytes = Array(text.utf8)
        var sent = 0
        let deadline = ContinuousClock.now + timeout
        while sent < bytes.count {
            let n = bytes.withUnsafeBytes { raw in
                Glibc.send(fd, raw.baseAddress! + sent, raw.count - sent, Int32(MSG_NOSIGNAL))
            }
            if n > 0 { sent += n; continue }
            if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
                var pfd = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                let left = deadline - .now
                guard left > .zero, poll(&pfd, 1, Wakeup.milliseconds(left)) >= 0 else { throw SocketError("send: timed out") }
                continue
            }
            throw .errno("send")
        }
    }

    /// Waits until data (or EOF) can be read, `wakeup` fires, or `timeout` passes.
    func wait(orWakeup wakeup: Wakeup, timeout: Duration) -> Ready {
        var fds = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0),
                   pollfd(fd: wakeup.fd, events: Int16(POLLIN), revents: 0)]
        while true {
            let rc = poll(&fds, 2, Wakeup.milliseconds(timeout))
            if rc < 0 && errno == EINTR { continue }
            if rc <= 0 { return .timedOut }
            if fds[1].revents != 0 { wakeup.drain(); return .woken }
            return .readable
        }
    }

    /// Reads what is there into `buffer`.
    func read(into buffer: inout LineBuffer) -> ReadResult {
        var chunk = [UInt8](repeating: 0, count: 16_384)
        let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if n > 0 { buffer.append(chunk[0..<n]); return .data }
        if n == 0 { return .eof }
        if errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR { return .data }
        return .failed(String(cString: strerror(errno)))
    }

    func close() {
        if fd >= 0 { Glibc.close(fd); fd = -1 }
    }
}

/// Splits a byte stream into lines ("\n", optional "\r"). A line longer than `maxLineBytes` is
/// dropped whole (gpsd's longest reports are a few KiB), so a peer that never sends a newline
/// cannot grow memory without bound.
struct LineBuffer {
    let maxLineBytes: Int
    private var pending: [UInt8] = []
    private var discarding = false
    /// Lines dropped for being too long (reported by the watcher as malformed).
    private(set) var droppedLines = 0

    init(maxLineBytes: Int = 256 * 1024) { self.maxLineBytes = maxLineBytes }

    mutating func append<C: Collection>(_ bytes: C) where C.Element == UInt8 { pending.append(contentsOf: bytes) }

    /// Complete lines received so far, in order.
    mutating func takeLines() -> [String] {
        var lines: [String] = []
        var start = 0
        while let nl = pending[start...].firstIndex(of: 10) {
            if discarding {
                discarding = false
            } else {
                var end = nl
                if end > start && pending[end - 1] == 13 { end -= 1 }
                lines.append(String(decoding: pending[start..<end], as: UTF8.self))
            }
            start = nl + 1
        }
        pending.removeFirst(start)
        if pending.count > maxLineBytes {
            if !discarding { droppedLines += 1 }
            discarding = true
            pending.removeAll(keepingCapacity: true)
        }
        return lines
    }
}
