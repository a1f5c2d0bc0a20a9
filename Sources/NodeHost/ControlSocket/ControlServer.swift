import Config
import ControlLink
import Glibc
import HostPresence
import Kit
import Registry
import Support

/// Serves the control socket (stateDir/control.sock, 0600) for `openclaw-node invoke`, `presence`
/// and `status` while the daemon runs. Each client gets a thread; commands go through the same
/// dispatcher as gateway invokes. Misbehaving local clients cannot starve the daemon or lock the
/// operator out: at most `maxClients` at once; when all are taken, the client idle longest is
/// dropped to make room (only when every one is running a command is the newcomer told
/// NODE_BUSY), and a client that sends no complete request line for `idleSeconds` is closed. A
/// client that goes away while its command runs cancels it (a hold_key lets go at once).
public final class ControlServer: Sendable {
    public enum StartError: Error, CustomStringConvertible {
        case alreadyRunning(String)
        case socket(String)
        public var description: String {
            switch self {
            case .alreadyRunning(let p): return "another openclaw-node is already running with this stateDir (control socket \(p) answers)"
            case .socket(let m): return "control socket: \(m)"
            }
        }
    }

    public let path: String
    private let dispatcher: Dispatcher
    private let presence: PresenceMonitor
    private let presenceMode: PresenceMode
    private let statusProvider: @Sendable () async -> JSONValue
    /// `{"op":"reconnect"}`: resumes a paused gateway reconnect; with `"fresh": true` starts a new
    /// session from the config and the stored gateway (after `openclaw-node pair`). nil: refused.
    private let reconnect: (@Sendable (_ fresh: Bool) async -> JSONValue)?
    /// `{"op":"restart", "maxWaitSeconds": N}`: a restart at the first idle moment (GracefulRestart).
    private let restart: (@Sendable (_ request: JSONValue) async -> JSONValue)?
    private let listener = Locked<UnixSocket?>(nil)
    private let log = Logger(component: "control")
    static let maxClients = 64
    /// OPENCLAW_NODE_CONTROL_IDLE_SECONDS overrides it (tests).
    let idleSeconds = Int(ProcessEnvironment.current["OPENCLAW_NODE_CONTROL_IDLE_SECONDS"] ?? "") ?? 30
    private let clients = ConnectionSlots()

    /// Commands go to `dispatcher`; `presence` answers and takes `presence` requests (its
    /// configured `presenceMode` is reported beside it).
    public init(path: String, dispatcher: Dispatcher, presence: PresenceMonitor, presenceMode: PresenceMode,
                reconnect: (@Sendable (Bool) async -> JSONValue)? = nil,
                restart: (@Sendable (JSONValue) async -> JSONValue)? = nil,
                statusProvider: @escaping @Sendable () async -> JSONValue) {
        self.path = path
        self.dispatcher = dispatcher
        self.presence = presence
        self.presenceMode = presenceMode
        self.reconnect = reconnect
        self.restart = restart
        self.statusProvider = statusProvider
    }

    public func start() throws(StartError) {
        if FileSystem.exists(path) {
            // A socket that still answers belongs to a live daemon; one that doesn't is left over.
            if let probe = try? UnixSocket.connect(path) { probe.close(); throw .alreadyRunning(path) }
            unlink(path)
        }
        let sock: UnixSocket
        do { sock = try UnixSocket.listen(path) } catch { throw .socket(error.description) }
        listener.withLock { $0 = sock }
        BlockingExecutor.startLoop(name: "control-accept") { [weak self] in self?.acceptLoop(sock) }
        log.info("listening on \(path)")
    }

    public func stop() {
        if let l = listener.withLock({ l in defer { l = nil }; return l }) {
            shutdown(l.fd, Int32(SHUT_RDWR))
            l.close()
            unlink(path)
        }
    }

    private func acceptLoop(_ sock: UnixSocket) {
        while let client = sock.accept() {
            // 0600 already keeps other users out; the uid check also covers a loosened mode.
            if let uid = client.peerUID(), uid != getuid(), uid != 0 {
                log.warn("refused control connection from uid \(uid)")
                client.close()
                continue
            }
            guard let slot = clients.admit(client.fd, limit: Self.maxClients) else {
                let busy = NodeError(.nodeBusy, "\(Self.maxClients) control clients are running commands; retry shortly", retryable: true)
                _ = client.writeAll(Array((ControlProtocol.errorReply(busy).jsonString() + "\n").utf8))
                client.close()
                continue
            }
            if slot.evicted { log.info("control socket full: dropped the client idle longest to serve a new one") }
            client.setReceiveTimeout(seconds: idleSeconds)
            BlockingExecutor.startLoop(name: "control-client") { [weak self, clients] in
                self?.serve(client, slot: slot.id)
                clients.leave(slot.id)
                client.close()
            }
        }
    }

    /// The client's requests, one line each, until it goes; the table's slot is left by the caller.
    private func serve(_ client: UnixSocket, slot: Int) {
        var buffer: [UInt8] = []
        while let line = client.readLine(limit: ControlWire.maxLineBytes, buffer: &buffer) {
            clients.setBusy(slot, true)
            let id = "local-" + SecureRandom.uuid()
            let reply = waitFor(client) { await self.handle(line, id: id) } onHangUp: {
                Task { await self.dispatcher.cancel(id: id) }
            }
            clients.setBusy(slot, false)
            // One encode, straight into the bytes written (a large payload is not copied again).
            var line = reply.jsonBytes
            line.append(0x0A)
            guard client.writeAll(line) else { return }
        }
    }

    /// Runs async work from this plain thread without occupying a cooperative-pool thread; calls
    /// `onHangUp` once if the client hangs up meanwhile.
    private func waitFor(_ client: UnixSocket, _ work: @escaping @Sendable () async -> JSONValue,
                         onHangUp: () -> Void) -> JSONValue {
        let result = Locked<JSONValue?>(nil)
        let done = Wakeup()
        // This thread owns the task: it waits for its result below.
        let task = Task { let v = await work(); result.update { $0 = v }; done.signal() }
        // One poll on both: the work's end, or the client's hang-up (POLLRDHUP, or POLLHUP when it
        // closed; data it sends meanwhile does not wake this). No timeout is needed.
        if done.wait(for: client.fd, events: Self.peerClosedEvents) == .ready { onHangUp() }
        result.wait(until: { $0 != nil })
        _ = task
        return result.withLock { $0 } ?? .null
    }

    /// POLLRDHUP (Linux; Swift's Glibc leaves it out, being _GNU_SOURCE).
    static let peerClosedEvents: Int16 = 0x2000

    private func handle(_ line: [UInt8], id: String) async -> JSONValue {
        guard let req = JSONValue.parse(line), case .object = req else {
            return ControlProtocol.errorReply(.invalidRequest("control request is not a JSON object"))
        }
        switch req["op"]?.stringValue {
        case "invoke":
            guard let command = req["command"]?.stringValue else {
                return ControlProtocol.errorReply(.invalidRequest("command required"))
            }
            switch await dispatcher.invoke(id: id, command: command, params: InvokeParams(req["params"]),
                                                   timeoutMs: req["timeoutMs"]?.intValue,
                                                   maxPayloadBytes: ControlProtocol.maxPayloadBytes) {
            case .success(let payload): return ["ok": true, "payload": payload]
            case .failure(let e): return ControlProtocol.errorReply(e)
            }
        case "presence":
            switch req["set"]?.stringValue {
            case "foreground": await presence.setOverride(.foreground)
            case "background": await presence.setOverride(.background)
            case "auto": await presence.setOverride(nil)
            case nil: break
            case let other?: return ControlProtocol.errorReply(.invalidRequest("presence must be foreground, background or auto (got \(other))"))
            }
            let s = await presence.refresh()
            return ["ok": true, "presence": .string(s.presence.rawValue), "reason": .string(s.reason),
                    "mode": .string(presenceMode.rawValue)]
        case "status":
            return ["ok": true, "status": await statusProvider()]
        case "commands":
            // The commands advertised now (a reload changes them): what `mcp serve` offers as tools.
            return ["ok": true, "commands": .array(dispatcher.registry.manifest.commands.map { .string($0) })]
        case "capability":
            guard let name = req["name"]?.stringValue,
                  let q = dispatcher.registry.entry(forCapability: name)?.capability.controlQueryable else {
                return ControlProtocol.errorReply(.invalidRequest("no running capability \(req["name"]?.jsonString() ?? "null") answers control queries"))
            }
            switch await q.controlQuery(req["request"] ?? .null) {
            case .success(let reply): return ["ok": true, "reply": reply]
            case .failure(let e): return ControlProtocol.errorReply(e)
            }
        case "reconnect":
            guard let reconnect else { return ControlProtocol.errorReply(.invalidRequest("this process has no gateway session")) }
            return ["ok": true, "reconnect": await reconnect(req["fresh"]?.boolValue == true)]
        case "restart":
            guard let restart else { return ControlProtocol.errorReply(.invalidRequest("this process cannot restart itself")) }
            return ["ok": true, "restart": await restart(req)]
        default:
            return ControlProtocol.errorReply(.invalidRequest("unknown op \(req["op"]?.jsonString() ?? "null")"))
        }
    }
}
