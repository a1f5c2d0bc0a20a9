import Kit
import Support

/// An MCP server over streamable HTTP: each message is a POST to the endpoint; the answer to a
/// request comes back as JSON or as an SSE stream (of any size the call caps allow); the server's
/// own notifications come on a GET stream where it offers one. `Mcp-Session-Id` from the
/// initialize answer and `MCP-Protocol-Version` go on every later request; closing DELETEs the
/// session. TLS is verified (system trust store or the server's `caFile`).
final class StreamableHTTPTransport: McpTransport, @unchecked Sendable {
    /// The largest answer read: 20 MiB of content, as JSON, with room for escaping.
    static let maxMessageBytes = 48 << 20

    private let url: URLParts
    private let headers: [String: String]
    private let caFile: String?
    private let streams: any NetworkStreams
    private let requestTimeout: Duration
    private let log: Logger
    private struct State {
        var sessionId: String?
        var protocolVersion: String?
        var receive: (@Sendable (JSONValue) -> Void)?
        var closed: (@Sendable (String) -> Void)?
        var ended = false
        var lastEventId: String?
    }
    private let state = Locked(State())
    private let stopFlag = CancelFlag()

    init(url: URLParts, headers: [String: String], caFile: String?, streams: any NetworkStreams, requestTimeout: Duration, log: Logger) {
        self.url = url; self.headers = headers; self.caFile = caFile; self.streams = streams
        self.requestTimeout = requestTimeout; self.log = log
    }

    var endpoint: String { get async { url.string } }

    func start(receive: @escaping @Sendable (JSONValue) -> Void, closed: @escaping @Sendable (String) -> Void) async throws(McpFailure) {
        state.withLock { $0.receive = receive; $0.closed = closed }
    }

    func negotiated(protocolVersion: String) async {
        state.withLock { $0.protocolVersion = protocolVersion }
        let t = self
        BlockingExecutor.startLoop(name: "mcp-http-get") { t.listen() }
    }

    func send(_ message: JSONValue) async throws(McpFailure) {
        let isRequest = message["method"] != nil && message["id"] != nil
        let isInitialize = message["method"]?.stringValue == "initialize"
        let t = self
        let result: Result<Void, McpFailure> = await BlockingExecutor.run("mcp-http-post") { (flag: CancelFlag) -> Result<Void, McpFailure> in
            Result { () throws(McpFailure) -> Void in
                try t.post(message, expectAnswer: isRequest, isInitialize: isInitialize, flag: .either(flag, t.stopFlag))
            }
        }
        if case .failure(.disconnected(let why)) = result { end(why) }
        try result.get()
    }

    func close() async {
        let (session, already) = state.withLock { s -> (String?, Bool) in defer { s.ended = true }; return (s.sessionId, s.ended) }
        stopFlag.cancel()
        guard !already, let session else { return }
        // Tell the server the session is over (it may refuse with 405: then it ends it itself).
        let t = self
        await BlockingExecutor.run("mcp-http-delete") { (_: CancelFlag) in
            guard let x = try? HTTPExchange(streams: t.streams, caFile: t.caFile, url: t.url, method: "DELETE",
                                            headers: t.requestHeaders(session: session, accept: nil), body: [],
                                            deadline: .now + .seconds(3), flag: CancelFlag()) else { return }
            _ = try? x.readHead()
        }
    }

    // MARK: on the executor's threads

    private func post(_ message: JSONValue, expectAnswer: Bool, isInitialize: Bool, flag: CancelFlag) throws(McpFailure) {
        let session = state.withLock { $0.sessionId }
        let x = try HTTPExchange(streams: streams, caFile: caFile, url: url, method: "POST",
                                 headers: requestHeaders(session: session, accept: "application/json, text/event-stream")
                                     + [("Content-Type", "application/json")],
                                 body: Array(message.jsonString().utf8), deadline: .now + requestTimeout + .seconds(10), flag: flag)
        let head = try x.readHead()
        if isInitialize, let id = head.headers["mcp-session-id"], !id.isEmpty {
            state.withLock { $0.sessionId = id }
        }
        switch head.status {
        case 200..<300: break
        case 404 where session != nil: throw .disconnected("the server ended the MCP session (HTTP 404)")
        case 401, 403: throw .disconnected("the server refused the node (HTTP \(head.status)); give it a token in headers (OAuth sign-in is not supported)")
        default:
            let text = String(decoding: (try? x.readAll(limit: 4096)) ?? [], as: UTF8.self)
            throw .server("HTTP \(head.status) from the server\(text.isEmpty ? "" : ": \(text.prefix(300))")")
        }
        guard expectAnswer, head.status != 202 else { return }
        let type = head.headers["content-type"]?.lowercased() ?? ""
        if type.hasPrefix("text/event-stream") {
            try readEvents(x, untilAnswerTo: message["id"])
        } else {
            let body = try x.readAll(limit: Self.maxMessageBytes)
            guard let v = JSONValue.parse(body) else { throw .server("the server's answer is not JSON") }
            deliver(v)
        }
    }

    /// Messages of an SSE answer, up to the one that answers `id` (the server may send
    /// notifications and its own requests first).
    private func readEvents(_ x: HTTPExchange, untilAnswerTo id: JSONValue?) throws(McpFailure) {
        var sse = SSEParser(maxEventBytes: Self.maxMessageBytes)
        while let piece = try x.readBody() {
            for e in sse.feed(piece) where e.name == "message" {
                guard let v = JSONValue.parse(e.data) else { continue }
                deliver(v)
                if let id, v["id"] == id, v["method"] == nil { return }
            }
            if sse.dropped > 0 { log.warn("dropped an SSE event larger than \(Self.maxMessageBytes >> 20) MiB") }
            if let last = sse.lastEventId { state.withLock { $0.lastEventId = last } }
        }
    }

    /// The GET stream for the server's notifications (tools/list_changed), reopened with backoff
    /// while the session lasts; a server without one answers 405.
    private func listen() {
        var delay = Duration.seconds(1)
        while !stopFlag.isCancelled {
            let (session, lastId) = state.withLock { ($0.sessionId, $0.lastEventId) }
            var headers = requestHeaders(session: session, accept: "text/event-stream")
            if let lastId { headers.append(("Last-Event-ID", lastId)) }
            do throws(McpFailure) {
                let x = try HTTPExchange(streams: streams, caFile: caFile, url: url, method: "GET", headers: headers, body: [],
                                         deadline: .now + .seconds(86_400 * 365), flag: stopFlag)
                let head = try x.readHead()
                if head.status == 405 { log.debug("the server offers no GET stream (HTTP 405)"); return }
                if head.status == 404, session != nil { end("the server ended the MCP session (HTTP 404)"); return }
                guard head.status == 200 else { throw .server("HTTP \(head.status) on the GET stream") }
                delay = .seconds(1)
                try readEvents(x, untilAnswerTo: nil)
            } catch {
                if stopFlag.isCancelled { return }
                log.debug("GET stream: \(error.description); opening it again in \(delay)")
            }
            _ = stopFlag.sleep(milliseconds: Int(delay.milliseconds))
            delay = min(delay * 2, .seconds(30))
        }
    }

    private func requestHeaders(session: String?, accept: String?) -> [(String, String)] {
        var out: [(String, String)] = []
        if let accept { out.append(("Accept", accept)) }
        if let session { out.append(("Mcp-Session-Id", session)) }
        if let v = state.withLock({ $0.protocolVersion }) { out.append(("MCP-Protocol-Version", v)) }
        let reserved: Set<String> = ["host", "content-length", "connection", "accept", "content-type", "mcp-session-id", "mcp-protocol-version"]
        for (k, v) in headers.sorted(by: { $0.key < $1.key }) where !reserved.contains(k.lowercased()) && Self.isHeaderSafe(k, v) {
            out.append((k, v))
        }
        return out
    }

    /// No CR/LF in a configured header: a value with one could add headers of its own.
    static func isHeaderSafe(_ name: String, _ value: String) -> Bool {
        !name.isEmpty && !(name + value).unicodeScalars.contains { $0 == "\r" || $0 == "\n" }
            && name.unicodeScalars.allSatisfy { $0.isASCII && $0 != ":" && $0 != " " }
    }

    private func deliver(_ v: JSONValue) {
        // A batch (older servers) is delivered message by message.
        if let items = v.arrayValue { for m in items { deliver(m) }; return }
        state.withLock { $0.receive }?(v)
    }

    private func end(_ why: String) {
        let closed = state.withLock { s -> (@Sendable (String) -> Void)? in
            defer { s.ended = true; s.closed = nil }
            return s.ended ? nil : s.closed
        }
        stopFlag.cancel()
        closed?(why)
    }
}
