import Config
import Glibc
import Kit
import Support

/// Why a socket operation failed, in words for logs and error messages.
struct SocketError: Error, CustomStringConvertible {
    let description: String
    init(_ d: String) { description = d }
    static func errno(_ what: String, _ code: Int32 = Glibc.errno) -> SocketError {
        SocketError("\(what): \(String(cString: strerror(code)))")
    }
}

/// A non-blocking TCP connection (NodeHost's TCPSocket) read as text lines. Used only from the
/// watch thread (never from the cooperative pool): every wait is a poll() that a `Wakeup` can
/// interrupt. The socket never leaves this type and is closed exactly once.
final class LineSocket {
    enum Ready { case readable, woken, timedOut }
    enum ReadResult { case data, eof, failed(String) }

    private let tcp: TCPSocket

    private init(tcp: TCPSocket) { self.tcp = tcp }
    deinit { close() }

    /// Resolves `host` and tries each address until one accepts within `timeout`.
    static func connect(host: String, port: Int, timeout: Duration) throws(SocketError) -> LineSocket {
        do {
            return LineSocket(tcp: try TCPSocket.connect(try TCPSocket.resolve(host: host, port: port), timeout: timeout))
        } catch {
            throw SocketError("connect: \(error.description)")
        }
    }

    /// Writes all of `text` (a gpsd command is a few dozen bytes; waits at most `timeout`).
    func send(_ text: String, timeout: Duration = .seconds(2)) throws(SocketError) {
        var rest = Array(text.utf8)
        let deadline = ContinuousClock.now + timeout
        while !rest.isEmpty {
            switch rest.withUnsafeBytes({ tcp.write($0) }) {
            case .bytes(let n): rest.removeFirst(n)
            case .wouldBlock:
                guard deadline > .now, pollOnce(tcp.fd, events: Int16(POLLOUT), timeout: deadline - .now) else {
                    throw SocketError("send: timed out")
                }
            case .eof: throw SocketError("send: connection closed")
            case .failed(let why): throw SocketError("send: \(why)")
            }
        }
    }

    /// Waits until data (or EOF) can be read, `wakeup` fires, or `timeout` passes.
    func wait(orWakeup wakeup: Wakeup, timeout: Duration) -> Ready {
        var fds = [pollfd(fd: tcp.fd, events: Int16(POLLIN), revents: 0),
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
        switch chunk.withUnsafeMutableBytes({ tcp.read($0) }) {
        case .bytes(let n): buffer.append(chunk[0..<n]); return .data
        case .wouldBlock: return .data
        case .eof: return .eof
        case .failed(let why): return .failed(why)
        }
    }

    func close() { tcp.close() }
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
