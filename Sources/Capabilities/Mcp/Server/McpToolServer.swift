import Config
import Kit
import Support

/// One MCP session of `openclaw-node mcp serve`, whatever carries its messages: initialize (the
/// protocol version negotiated down as the node's MCP client does), `tools/list` from the node's
/// command table, `tools/call` through the node's dispatcher — the same gates, param checks,
/// presence and exec approvals as a gateway's invoke — and `notifications/cancelled`, which
/// cancels the node command. Calls run side by side; each answer is sent when it is ready.
final class McpToolServer: Sendable {
    /// The versions this server speaks, newest first (those of the node's MCP client).
    static let protocolVersions = McpClient.protocolVersions

    typealias Invoke = @Sendable (_ command: String, _ params: JSONValue) async -> Result<JSONValue, NodeError>
    /// The rows of the commands advertised now.
    typealias Rows = @Sendable () async -> [BundleManifest.Command]
    /// Where one message's answer goes: the answer, or nil when none will come (a notification,
    /// or a call the client cancelled) — stdio writes nothing then, HTTP ends the exchange.
    typealias Answer = @Sendable (JSONValue?) -> Void

    private let invoke: Invoke
    private let commands: Rows
    /// Whether this transport can send unasked (stdio can; HTTP without a stream cannot): the
    /// `listChanged` capability, and `watchTools`.
    private let notifies: Bool
    private let toolList: NodeToolList
    private let log: Logger
    /// Where the calls are answered from ("the running daemon", "this process"): said in `instructions`.
    private let via: String

    private struct State {
        var protocolVersion: String?
        /// Calls running, by request id (its JSON text): a cancel finds its task here.
        var calls: [String: Task<Void, Never>] = [:]
        /// Calls the client cancelled: their answers are not sent (the specification says so).
        var cancelled: Set<String> = []
        /// The commands whose tools the client was last sent (nil before its first tools/list):
        /// a call is checked against them, without asking the daemon for its table again.
        var listed: [BundleManifest.Command]?
    }
    private let state = Locked(State())

    init(invoke: @escaping Invoke, commands: @escaping Rows, toolList: NodeToolList, via: String, notifies: Bool, log: Logger) {
        self.invoke = invoke; self.commands = commands; self.toolList = toolList; self.via = via; self.notifies = notifies; self.log = log
    }

    /// Until cancelled: every `every`, the tools offered are compared with the last list the
    /// client was sent, and `notifications/tools/list_changed` goes out when they differ (the
    /// daemon's capabilities come and go with a config reload or a device that appears).
    func watchTools(every: Duration, send: @escaping @Sendable (JSONValue) -> Void) async {
        while !Task.isCancelled {
            try? await Task.sleep(for: every)
            guard let listed = state.withLock({ $0.listed?.map(\.name) }) else { continue }  // no tools/list yet
            let rows = await commands().filter(toolList.offers)
            let now = rows.map(\.name)
            if now != listed {
                state.withLock { $0.listed = rows }
                log.info("the tools changed (\(Set(now).subtracting(listed).sorted().map { "+" + $0 } + Set(listed).subtracting(now).sorted().map { "-" + $0 }); telling the client")
                send(JSONRPCMessage.notification("notifications/tools/list_changed"))
            }
        }
    }

    /// The protocol version `initialize` settled on (nil before it).
    var protocolVersion: String? { state.withLock { $0.protocolVersion } }

    /// The calls still running (when the client goes, they are cancelled).
    var running: Int { state.withLock { $0.calls.count } }

    /// Handles one message from the client; `answer` is called once, with the reply or nil.
    /// `tools/call` runs in a task of its own, so a long call never holds up the next message.
    func receive(_ message: JSONValue, answer: @escaping Answer) {
        guard let parsed = JSONRPCMessage(message) else {
            answer(JSONRPCMessage.error(id: message["id"] ?? .null, code: -32600, message: "not a JSON-RPC 2.0 message"))
            return
        }
        switch parsed {
        case .request(let id, let method, let params):
            request(id: id, method: method, params: params, answer: answer)
        case .notification(let method, let params):
            if method == "notifications/cancelled", let id = params?["requestId"] { cancelCall(id, reason: params?["reason"]?.stringValue) }
            // notifications/initialized and the rest ask for nothing.
            answer(nil)
        case .response:
            answer(nil)  // this server sends no requests
        }
    }

    /// A line or body that is not JSON: JSON-RPC's parse error, with a null id (there is none to answer).
    static let parseError = JSONRPCMessage.error(id: .null, code: -32700, message: "parse error: the message is not JSON")

    /// Cancels every call still running (the client hung up).
    func cancelAll() {
        let tasks = state.withLock { s -> [Task<Void, Never>] in
            s.cancelled.formUnion(s.calls.keys)
            return Array(s.calls.values)
        }
        for t in tasks { t.cancel() }
    }

    private func request(id: JSONValue, method: String, params: JSONValue?, answer send: @escaping Answer) {
        switch method {
        case "initialize":
            let asked = params?["protocolVersion"]?.stringValue ?? ""
            let version = Self.protocolVersions.contains(asked) ? asked : Self.protocolVersions[0]
            state.withLock { $0.protocolVersion = version }
            if let client = params?["clientInfo"]?["name"]?.stringValue { log.info("MCP client \(client) connected (MCP \(version))") }
            send(JSONRPCMessage.result(id: id, [
                "protocolVersion": .string(version),
                "capabilities": ["tools": ["listChanged": .bool(notifies)]],
                "serverInfo": ["name": "openclaw-node", "title": "OpenClaw node", "version": .string(NodeVersion.version)],
                "instructions": .string("The tools are this device's OpenClaw node commands, answered by \(via). "
                    + "A tool that needs a person at the device is refused with NODE_BACKGROUND_UNAVAILABLE when nobody is there; "
                    + "system.run follows the node's exec approvals (openclaw-node approvals)."),
            ]))
        case "ping":
            send(JSONRPCMessage.result(id: id, [:]))
        case "tools/list":
            // One page: the node has a few dozen commands, not thousands.
            // Held with the calls, by its request id: a cancel of it finds it there.
            let (commands, toolList, key) = (self.commands, self.toolList, id.jsonString())
            state.withLock { s in
                s.calls[key] = Task {
                    let rows = await commands().filter(toolList.offers)
                    let answer = self.state.withLock { s -> Bool in
                        s.listed = rows
                        s.calls[key] = nil
                        return s.cancelled.remove(key) == nil
                    }
                    send(answer ? JSONRPCMessage.result(id: id, ["tools": .array(rows.map(NodeToolList.tool))]) : nil)
                }
            }
        case "tools/call":
            call(id: id, params: params, answer: send)
        default:
            send(JSONRPCMessage.error(id: id, code: JSONRPCError.methodNotFound, message: "method not found: \(method)"))
        }
    }

    /// Registered at once (so a cancel that follows finds it), then checked against the commands
    /// advertised now and run.
    private func call(id: JSONValue, params: JSONValue?, answer send: @escaping Answer) {
        guard let name = params?["name"]?.stringValue else {
            send(JSONRPCMessage.error(id: id, code: -32602, message: "tools/call needs the tool's name"))
            return
        }
        let arguments = params?["arguments"] ?? .object([:])
        let key = id.jsonString()
        let version = state.withLock { $0.protocolVersion } ?? Self.protocolVersions[0]
        let (invoke, commands, toolList, log) = (self.invoke, self.commands, self.toolList, self.log)
        // Registered before it can finish, under the lock its end takes.
        state.withLock { s in
            s.calls[key] = Task {
                let cached = self.state.withLock { $0.listed }
                let rows: [BundleManifest.Command]
                if let cached { rows = cached } else { rows = await commands() }
                let offered = rows.contains { $0.name == name && toolList.offers($0) }
                let reply: JSONValue
                if offered {
                    let outcome = await invoke(name, arguments)
                    if case .failure(let e) = outcome { log.info("tool \(name): \(e.message)") }
                    reply = JSONRPCMessage.result(id: id, CallToolResultMaker.result(command: name, outcome, protocolVersion: version))
                } else {
                    reply = JSONRPCMessage.error(id: id, code: -32602, message: "unknown tool: \(name) (tools/list names the tools this node offers)")
                }
                let answer = self.state.withLock { s -> Bool in
                    s.calls[key] = nil
                    return s.cancelled.remove(key) == nil
                }
                send(answer ? reply : nil)
            }
        }
    }

    /// Cancels the call with this request id (the client cancelled it, or hung up on it); its answer is not sent.
    func cancelCall(_ id: JSONValue, reason: String?) {
        let key = id.jsonString()
        let task = state.withLock { s -> Task<Void, Never>? in
            guard let t = s.calls[key] else { return nil }
            s.cancelled.insert(key)
            return t
        }
        guard let task else { return }  // finished already, or never ours: nothing to do
        log.info("the MCP client cancelled call \(key)\(reason.map { " (\($0))" } ?? "")")
        task.cancel()
    }
}

