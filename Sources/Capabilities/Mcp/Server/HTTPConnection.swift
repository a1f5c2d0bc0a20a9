import Glibc
import Kit
import Support

extension McpHTTPServe {
    /// Where a client's bytes come and go: its socket, or TLS over it.
    enum Wire {
        case plain(Int32)
        case tls(any ByteStream)

        func read(pending: inout [UInt8]) throws(HTTPRequestReader.Failure) -> HTTPRequest {
            switch self {
            case .plain(let fd): return try HTTPRequestReader.read(fd, pending: &pending, maxBody: McpHTTPServe.maxBody, timeoutMs: McpHTTPServe.idleMs)
            case .tls(let stream): return try HTTPRequestReader.read(stream, pending: &pending, maxBody: McpHTTPServe.maxBody, timeoutMs: McpHTTPServe.idleMs)
            }
        }

        func send(_ bytes: [UInt8]) -> Bool {
            switch self {
            case .plain(let fd): return (try? SystemIO.live.writeAll(fd, bytes, socket: true, timeoutMs: McpHTTPServe.idleMs)) != nil
            case .tls(let stream): return ByteStreamIO.writeAll(stream, bytes, timeoutMs: McpHTTPServe.idleMs)
            }
        }

        /// The socket (a hang-up shows on it under TLS too).
        var fd: Int32 {
            switch self {
            case .plain(let fd): return fd
            case .tls(let stream): return stream.fd
            }
        }
    }

    /// One client connection: requests one after another (keep-alive), each checked — the
    /// endpoint, the Origin, the bearer token, the session — before its message reaches a session.
    struct Connection {
        let wire: Wire
        let token: String
        let sessions: Sessions
        let log: Logger
        /// Marks the connection busy while a request it sent is being answered (ConnectionSlots).
        let busy: @Sendable (Bool) -> Void

        func serve() {
            var pending: [UInt8] = []
            while true {
                let request: HTTPRequest
                do throws(HTTPRequestReader.Failure) {
                    request = try wire.read(pending: &pending)
                } catch {
                    if case .refused(let status, let why) = error {
                        send(HTTPRequestReader.response(status, HTTPRequestReader.reason(status), headers: [("Content-Type", "text/plain")], body: Array((why + "\n").utf8), close: true))
                    }
                    return
                }
                busy(true)
                defer { busy(false) }
                guard let reply = handle(request) else { return }  // a cancelled call: nothing to answer
                guard send(reply.bytes), !reply.close else { return }
            }
        }

        @discardableResult
        private func send(_ bytes: [UInt8]) -> Bool { wire.send(bytes) }

        private func plain(_ status: Int, _ text: String, headers: [(String, String)] = [], close: Bool = false) -> (bytes: [UInt8], close: Bool) {
            (HTTPRequestReader.response(status, HTTPRequestReader.reason(status), headers: [("Content-Type", "text/plain")] + headers,
                                        body: Array((text + "\n").utf8), close: close), close)
        }

        private func json(_ value: JSONValue, session: String?) -> (bytes: [UInt8], close: Bool) {
            var headers = [("Content-Type", "application/json")]
            if let session { headers.append(("Mcp-Session-Id", session)) }
            return (HTTPRequestReader.response(200, "OK", headers: headers, body: value.jsonBytes), false)
        }

        /// The answer to one request; nil when the connection is to be closed without one.
        private func handle(_ r: HTTPRequest) -> (bytes: [UInt8], close: Bool)? {
            guard r.route == "/mcp" else { return plain(404, "the MCP endpoint is /mcp") }
            // A web page in the agent's browser must not reach the node (DNS rebinding): a
            // browser names the page's origin, and only a loopback one is served.
            if let origin = r.headers["origin"], !Self.isLoopbackOrigin(origin) {
                log.warn("refused a request from the web origin \(origin)")
                return plain(403, "requests from web pages are not served (Origin \(origin))", close: true)
            }
            let presented = r.headers["authorization"].flatMap { $0.hasPrefix("Bearer ") ? String($0.dropFirst(7)).trimmed() : nil } ?? ""
            guard ServeToken.matches(presented, token) else {
                log.warn("refused a request without the right bearer token")
                return plain(401, "a bearer token is required: openclaw-node mcp config --http prints the entry with it",
                             headers: [("WWW-Authenticate", "Bearer realm=\"openclaw-node\"")], close: true)
            }
            switch r.method {
            case "GET":
                return plain(405, "this server sends nothing unasked: POST messages to /mcp", headers: [("Allow", "POST, DELETE")])
            case "DELETE":
                guard let id = r.headers["mcp-session-id"] else { return plain(400, "Mcp-Session-Id required") }
                return sessions.end(id) ? plain(200, "session ended") : plain(404, "no such session")
            case "POST":
                return post(r)
            default:
                return plain(405, "POST or DELETE", headers: [("Allow", "POST, DELETE")])
            }
        }

        private func post(_ r: HTTPRequest) -> (bytes: [UInt8], close: Bool)? {
            guard let message = JSONValue.parse(r.body) else {
                return (HTTPRequestReader.response(400, "Bad Request", headers: [("Content-Type", "application/json")],
                                                   body: McpToolServer.parseError.jsonBytes), false)
            }
            let session: (id: String, server: McpToolServer)
            if message["method"]?.stringValue == "initialize" {
                guard let opened = sessions.open() else { return plain(503, "too many sessions; end one (DELETE) first") }
                session = opened
            } else {
                guard let id = r.headers["mcp-session-id"] else { return plain(400, "Mcp-Session-Id required (initialize first)") }
                guard let server = sessions.find(id) else { return plain(404, "no such session (it ended; initialize again)") }
                session = (id, server)
            }
            // The answer, or the client hanging up first — which cancels the call.
            let answer = Locked<JSONValue??>(nil)
            let ready = Wakeup()
            session.server.receive(message) { reply in
                answer.withLock { $0 = .some(reply) }
                ready.signal()
            }
            if ready.wait(for: wire.fd, events: Self.peerClosedEvents) == .ready, !ready.isSignalled {
                if let id = message["id"] { session.server.cancelCall(id, reason: "the HTTP client hung up") }
                return nil
            }
            guard let reply = answer.withLock({ $0 }) ?? nil else {
                // A notification or response: accepted. A request that got no answer was cancelled.
                return message["id"] == nil ? (HTTPRequestReader.response(202, "Accepted"), false) : nil
            }
            return json(reply, session: session.id)
        }

        /// POLLRDHUP (Linux; Swift's Glibc leaves it out).
        static let peerClosedEvents: Int16 = 0x2000

        static func isLoopbackOrigin(_ origin: String) -> Bool {
            guard let url = URLParts(string: origin), let host = url.host else { return false }
            return host == "localhost" || host == "127.0.0.1" || host == "::1" || host == "[::1]" || host.hasPrefix("127.")
        }
    }
}
