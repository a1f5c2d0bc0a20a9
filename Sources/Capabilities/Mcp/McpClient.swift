import Kit
import Support

/// A tool as the server lists it.
struct McpTool: Sendable, Equatable {
    let name: String
    let description: String?
    let inputSchema: JSONValue?
}

/// The client side of one MCP session (JSON-RPC 2.0 over any `McpTransport`): the initialize
/// handshake with version negotiation, tools/list with pagination, tools/call with timeouts and
/// cancellation, answers to the server's pings, and its tools/list_changed notifications.
actor McpClient {
    /// The versions this client speaks through `initialize`, newest first; it offers the first.
    static let protocolVersions = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"]

    private let transport: any McpTransport
    private let log: Logger
    private var nextId = 1
    private var pending: [Int: CheckedContinuation<Result<JSONValue, McpFailure>, Never>] = [:]
    private var closedReason: String?
    private(set) var protocolVersion: String?
    private(set) var serverInfo: String?
    private var onToolsChanged: (@Sendable () -> Void)?
    private var onClosed: (@Sendable (String) -> Void)?
    /// Server notifications beyond this pace are dropped (a flood costs the node nothing but reading).
    private var notificationPace = RateLimiter(perSecond: 50, burst: 200)

    init(transport: any McpTransport, log: Logger) { self.transport = transport; self.log = log }

    /// Starts the transport and runs the initialize handshake.
    func connect(timeout: Duration, onToolsChanged: @escaping @Sendable () -> Void,
                 onClosed: @escaping @Sendable (String) -> Void) async throws(McpFailure) {
        self.onToolsChanged = onToolsChanged
        self.onClosed = onClosed
        try await transport.start(receive: { [weak self] m in Task { await self?.handle(m) } },
                                  closed: { [weak self] why in Task { await self?.transportClosed(why) } })
        let result = try await request("initialize", [
            "protocolVersion": .string(Self.protocolVersions[0]),
            "capabilities": [:],
            "clientInfo": ["name": "openclaw-node", "version": .string(NodeVersion.version)],
        ], timeout: timeout)
        guard let version = result["protocolVersion"]?.stringValue else { throw .server("the initialize answer names no protocolVersion") }
        // The server may answer with another version; we go on only with one we speak.
        guard Self.protocolVersions.contains(version) else {
            throw .server("the server speaks MCP \(version); this node speaks \(Self.protocolVersions.joined(separator: ", "))")
        }
        protocolVersion = version
        let info = result["serverInfo"]
        serverInfo = [info?["name"]?.stringValue, info?["version"]?.stringValue].compactMap { $0 }.filter { !$0.isEmpty }.joined(separator: " ")
        await transport.negotiated(protocolVersion: version)
        try await transport.send(JSONRPCMessage.notification("notifications/initialized"))
    }

    /// Every tool, following `nextCursor` (at most 100 pages: a server that never ends its list
    /// is cut there).
    func listTools(timeout: Duration) async throws(McpFailure) -> [McpTool] {
        var tools: [McpTool] = [], cursor: String?
        for _ in 0..<100 {
            let page = try await request("tools/list", cursor.map { ["cursor": .string($0)] } ?? [:], timeout: timeout)
            for t in page["tools"]?.arrayValue ?? [] {
                guard let name = t["name"]?.stringValue, !name.isEmpty else { continue }
                tools.append(McpTool(name: name, description: t["description"]?.stringValue, inputSchema: t["inputSchema"]))
            }
            guard let next = page["nextCursor"]?.stringValue, !next.isEmpty else { return tools }
            cursor = next
        }
        log.warn("tools/list still had more pages after 100; using the first 100 pages")
        return tools
    }

    /// Calls a tool: the CallToolResult. A timeout or the caller's cancellation sends
    /// notifications/cancelled, so the server can stop the work.
    func callTool(_ name: String, arguments: JSONValue, timeout: Duration) async throws(McpFailure) -> JSONValue {
        try await request("tools/call", ["name": .string(name), "arguments": arguments], timeout: timeout, cancellable: true)
    }

    func close() async {
        if closedReason == nil { closedReason = "closed by the node" }
        failPending(.disconnected(closedReason ?? "closed"))
        await transport.close()
    }

    var isOpen: Bool { closedReason == nil }

    // MARK: requests

    private func request(_ method: String, _ params: JSONValue, timeout: Duration, cancellable: Bool = false) async throws(McpFailure) -> JSONValue {
        if let closedReason { throw .disconnected(closedReason) }
        let id = nextId
        nextId += 1
        let timer = Task { [weak self] in
            try? await Task.sleep(for: timeout)
            guard !Task.isCancelled else { return }
            await self?.finish(id, .failure(.timeout("MCP request \(method) timed out after \(timeout.milliseconds) ms")), notifyServer: cancellable ? "timed out" : nil)
        }
        defer { timer.cancel() }
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (c: CheckedContinuation<Result<JSONValue, McpFailure>, Never>) in
                pending[id] = c
                // Cancelled before the continuation was stored: the handler above found nothing to end.
                if Task.isCancelled { finish(id, .failure(.timeout("MCP request \(method) was cancelled")), notifyServer: nil); return }
                Task { await self.sendRequest(id, method, params) }
            }
        } onCancel: {
            Task { await self.finish(id, .failure(.timeout("MCP request \(method) was cancelled")), notifyServer: cancellable ? "cancelled by the caller" : nil) }
        }
        return try result.get()
    }

    private func sendRequest(_ id: Int, _ method: String, _ params: JSONValue) async {
        guard pending[id] != nil else { return }  // cancelled before it went out
        do { try await transport.send(JSONRPCMessage.request(id: id, method: method, params: params)) }
        catch { finish(id, .failure(error), notifyServer: nil) }
    }

    /// Ends one request; `notifyServer` (why) also tells the server it is no longer wanted.
    private func finish(_ id: Int, _ result: Result<JSONValue, McpFailure>, notifyServer: String?) {
        guard let c = pending.removeValue(forKey: id) else { return }
        c.resume(returning: result)
        if let why = notifyServer, closedReason == nil {
            let note = JSONRPCMessage.notification("notifications/cancelled", params: ["requestId": .number(Double(id)), "reason": .string(why)])
            Task { try? await transport.send(note) }
        }
    }

    private func failPending(_ failure: McpFailure) {
        let all = pending
        pending = [:]
        for c in all.values { c.resume(returning: .failure(failure)) }
    }

    // MARK: incoming

    private func handle(_ raw: JSONValue) async {
        guard let message = JSONRPCMessage(raw) else {
            log.debug("ignored a message that is not JSON-RPC 2.0: \(raw.jsonString().prefix(200))")
            return
        }
        switch message {
        case .response(let id, let result):
            guard let n = id.intValue else { return }
            finish(n, result.mapError { .server($0.description) }, notifyServer: nil)
        case .request(let id, let method, _):
            // ping must be answered; this client offers nothing else a server may ask for.
            let answer = method == "ping" ? JSONRPCMessage.result(id: id, [:])
                : JSONRPCMessage.error(id: id, code: JSONRPCError.methodNotFound, message: "this client does not offer \(method)")
            try? await transport.send(answer)
        case .notification(let method, _):
            guard notificationPace.allow() else {
                if let n = notificationPace.takeDropped() { log.warn("dropped \(n) notifications: the server sends more than 50 per second") }
                return
            }
            if method == "notifications/tools/list_changed" { onToolsChanged?() }
        }
    }

    private func transportClosed(_ why: String) {
        guard closedReason == nil else { return }
        closedReason = why
        failPending(.disconnected(why))
        onClosed?(why)
    }
}
