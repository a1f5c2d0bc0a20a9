import Config
import Glibc
import Kit
import Support

/// The DevTools protocol over Chromium's `--remote-debugging-pipe`: JSON messages separated by
/// NUL bytes, commands written to the browser's fd 3, replies and events read from its fd 4.
/// A pipe rather than a TCP port means no other local user can reach the browser.
///
/// One reader thread splits and routes messages: replies resume their caller, events go to
/// `onEvent` (on the reader thread; keep it short). When the browser exits the pipe reaches EOF,
/// every waiting call fails and `onClose` runs once.
final class CDPPipe: Sendable {
    struct Failure: Error, CustomStringConvertible {
        enum Kind { case protocolError, timeout, closed }
        let description: String
        var kind: Kind = .closed
        /// The browser answered with a protocol error (as opposed to a timeout or a dead pipe).
        var isProtocolError: Bool { kind == .protocolError }
    }

    typealias EventHandler = @Sendable (_ method: String, _ params: JSONValue, _ sessionId: String?) -> Void

    private let writeFD: Int32
    private let readFD: Int32
    private struct State {
        var nextId = 1
        var pending: [Int: CheckedContinuation<Result<JSONValue, Failure>, Never>] = [:]
        var timers: [Int: DeadlineTimer.Token] = [:]
        /// Messages for the writer thread, in order.
        var outbox: [(id: Int, data: [UInt8])] = []
        var closed: String?
    }
    private let state = Locked(State())
    private let onEvent: EventHandler
    private let onClose: @Sendable (String) -> Void
    /// Screenshots arrive as one base64 message; anything beyond this is a broken browser.
    static let maxMessageBytes = 256 * 1024 * 1024

    init(writeFD: Int32, readFD: Int32, onEvent: @escaping EventHandler, onClose: @escaping @Sendable (String) -> Void) {
        self.writeFD = writeFD
        self.readFD = readFD
        self.onEvent = onEvent
        self.onClose = onClose
        BlockingExecutor.startLoop(name: "cdp-reader") { [self] in readLoop() }
        BlockingExecutor.startLoop(name: "cdp-writer") { [self] in writeLoop() }
    }

    deinit {
        close(writeFD)
        close(readFD)
    }

    var isClosed: Bool { state.withLock { $0.closed != nil } }

    /// Sends one command and waits for its reply (`result`), at most `timeout`.
    func call(_ method: String, _ params: JSONValue = [:], session: String? = nil,
              timeout: Duration = .seconds(10)) async throws(Failure) -> JSONValue {
        let result = await withCheckedContinuation { (c: CheckedContinuation<Result<JSONValue, Failure>, Never>) in
            let id: Int? = state.withLock { s in
                if s.closed != nil { return nil }
                let id = s.nextId
                s.nextId += 1
                s.pending[id] = c
                return id
            }
            guard let id else { c.resume(returning: .failure(Failure(description: "the browser is gone"))); return }
            var message: [String: JSONValue] = ["id": .number(Double(id)), "method": .string(method), "params": params]
            if let session { message["sessionId"] = .string(session) }
            let timer = DeadlineTimer.shared.schedule(at: .now + timeout) { [weak self] in
                self?.finish(id, .failure(Failure(description: "\(method) got no answer within \(timeout)", kind: .timeout)))
            }
            // One writer, off the cooperative pool: messages over PIPE_BUF (4 KiB) would interleave
            // if two calls wrote at once, and a wedged browser must not pin a pool thread.
            let data = message.jsonValue.jsonBytes + [0]
            let stillWaiting = state.update { s -> Bool in
                guard s.pending[id] != nil else { return false }
                s.timers[id] = timer
                s.outbox.append((id, data))
                return true
            }
            if !stillWaiting { DeadlineTimer.shared.cancel(timer); return }
        }
        return try result.get()
    }

    /// Writes queued messages in order; sleeps on the state's condition while there are none and
    /// ends once the pipe is closed.
    private func writeLoop() {
        while true {
            state.wait(until: { $0.closed != nil || !$0.outbox.isEmpty })
            let next = state.withLock { s -> (id: Int, data: [UInt8])? in
                s.closed != nil || s.outbox.isEmpty ? nil : s.outbox.removeFirst()
            }
            guard let next else { return }
            if !write(next.data) { finish(next.id, .failure(Failure(description: "cannot write to the browser (it exited)"))) }
        }
    }

    private func finish(_ id: Int, _ r: Result<JSONValue, Failure>) {
        let (c, t) = state.withLock { s in (s.pending.removeValue(forKey: id), s.timers.removeValue(forKey: id)) }
        if let t { DeadlineTimer.shared.cancel(t) }
        c?.resume(returning: r)
    }

    private func write(_ data: [UInt8]) -> Bool {
        (try? SystemIO.live.writeAll(writeFD, data)) != nil
    }

    private func readLoop() {
        var buffer = [UInt8]()
        var chunk = [UInt8](repeating: 0, count: 256 * 1024)
        var reason = "the browser closed the DevTools pipe"
        reading: while true {
            let n = chunk.withUnsafeMutableBytes { read(readFD, $0.baseAddress, $0.count) }
            if n < 0 { if errno == EINTR { continue }; reason = "DevTools pipe read failed: \(String(cString: strerror(errno)))"; break }
            if n == 0 { break }
            var start = buffer.count
            buffer.append(contentsOf: chunk[0..<n])
            // Split on NUL; a message may span reads.
            var from = 0
            while let nul = buffer[start...].firstIndex(of: 0) {
                dispatch(Array(buffer[from..<nul]))
                from = nul + 1
                start = from
            }
            if from > 0 { buffer.removeFirst(from) }
            if buffer.count > Self.maxMessageBytes { reason = "the browser sent a message over \(Self.maxMessageBytes) bytes"; break reading }
        }
        let waiting = state.update { s -> [Int: CheckedContinuation<Result<JSONValue, Failure>, Never>] in
            s.closed = reason
            defer { s.pending.removeAll(); s.timers.values.forEach { DeadlineTimer.shared.cancel($0) }; s.timers.removeAll(); s.outbox.removeAll() }
            return s.pending
        }
        for c in waiting.values { c.resume(returning: .failure(Failure(description: reason))) }
        onClose(reason)
    }

    private func dispatch(_ data: [UInt8]) {
        guard let message = JSONValue.parse(data) else { return }
        if let id = message["id"]?.intValue {
            if let e = message["error"] {
                let text = e["message"]?.stringValue ?? e.jsonString()
                finish(id, .failure(Failure(description: text, kind: .protocolError)))
            } else {
                finish(id, .success(message["result"] ?? [:]))
            }
        } else if let method = message["method"]?.stringValue {
            onEvent(method, message["params"] ?? [:], message["sessionId"]?.stringValue)
        }
    }
}

private extension Dictionary where Key == String, Value == JSONValue {
    var jsonValue: JSONValue { .object(self) }
}
