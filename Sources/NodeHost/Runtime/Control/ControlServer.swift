import Config
import Dispatch
import FoundationEssentials
import Glibc
import HostPresence
import Kit
import Registry
import Store
import Support

/// Serves the control socket (stateDir/control.sock, 0600) for `openclaw-node invoke`, `presence`
/// and `status` while the daemon runs. Each client gets a thread; commands go through the same
/// dispatcher as gateway invokes. Misbehaving local clients cannot starve the daemon: at most
/// `maxClients` at once (the rest are told NODE_BUSY and closed), and a client that sends no
/// complete request line for `idleSeconds` is closed.
public final class ControlServer: @unchecked Sendable {
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
    private let runtime: NodeRuntime
    private let statusProvider: @Sendable () async -> JSONValue
    private var listener: UnixSocket?
    private let log = Logger(component: "control")
    static let maxClients = 64
    /// OPENCLAW_NODE_CONTROL_IDLE_SECONDS overrides it (tests).
    let idleSeconds = Int(ProcessInfo.processInfo.environment["OPENCLAW_NODE_CONTROL_IDLE_SECONDS"] ?? "") ?? 30
    private let clients = ClientCount()

    public init(runtime: NodeRuntime, statusProvider: @escaping @Sendable () async -> JSONValue) {
        self.runtime = runtime
        self.path = runtime.controlSocketPath
        self.statusProvider = statusProvider
    }

    public func start() throws(StartError) {
        if FileManager.default.fileExists(atPath: path) {
            // A socket that still answers belongs to a live daemon; one that doesn't is left over.
            if let probe = try? UnixSocket.connect(path) { probe.close(); throw .alreadyRunning(path) }
            unlink(path)
        }
        let sock: UnixSocket
        do { sock = try UnixSocket.listen(path) } catch { throw .socket(error.description) }
        listener = sock
        DetachedThread.start(name: "control-accept") { [weak self] in self?.acceptLoop(sock) }
        log.info("listening on \(path)")
    }

    public func stop() {
        if let l = listener {
            shutdown(l.fd, Int32(SHUT_RDWR))
            l.close()
            unlink(path)
        }
        listener = nil
    }

    private func acceptLoop(_ sock: UnixSocket) {
        while let client = sock.accept() {
            // 0600 already keeps other users out; the uid check also covers a loosened mode.
            if let uid = client.peerUID(), uid != getuid(), uid != 0 {
                log.warn("refused control connection from uid \(uid)")
                client.close()
                continue
            }
            guard clients.enter(limit: Self.maxClients) else {
                let busy = NodeError(.nodeBusy, "\(Self.maxClients) control clients are connected already; retry shortly", retryable: true)
                _ = client.writeAll(Data((ControlProtocol.errorReply(busy).jsonString() + "\n").utf8))
                client.close()
                continue
            }
            client.setReceiveTimeout(seconds: idleSeconds)
            DetachedThread.start(name: "control-client") { [weak self, clients] in
                self?.serve(client)
                clients.leave()
            }
        }
    }

    private func serve(_ client: UnixSocket) {
        defer { client.close() }
        var buffer: [UInt8] = []
        while let line = client.readLine(limit: ControlProtocol.maxLineBytes, buffer: &buffer) {
            let reply = waitFor { await self.handle(line) }
            guard client.writeAll(Data((reply.jsonString() + "\n").utf8)) else { return }
        }
    }

    /// Runs async work from this plain thread without occupying a cooperative-pool thread.
    private func waitFor(_ work: @escaping @Sendable () async -> JSONValue) -> JSONValue {
        let box = ResultBox()
        let done = DispatchSemaphore(value: 0)
        Task { box.value = await work(); done.signal() }
        done.wait()
        return box.value ?? .null
    }

    private func handle(_ line: Data) async -> JSONValue {
        guard let req = JSONValue.parse(line), case .object = req else {
            return ControlProtocol.errorReply(.invalidRequest("control request is not a JSON object"))
        }
        switch req["op"]?.stringValue {
        case "invoke":
            guard let command = req["command"]?.stringValue else {
                return ControlProtocol.errorReply(.invalidRequest("command required"))
            }
            let id = "local-" + UUID().uuidString.lowercased()
            switch await runtime.dispatcher.invoke(id: id, command: command, params: InvokeParams(req["params"]),
                                                   timeoutMs: req["timeoutMs"]?.intValue,
                                                   maxPayloadBytes: ControlProtocol.maxPayloadBytes) {
            case .success(let payload): return ["ok": true, "payload": payload]
            case .failure(let e): return ControlProtocol.errorReply(e)
            }
        case "presence":
            switch req["set"]?.stringValue {
            case "foreground": await runtime.presence.setOverride(.foreground)
            case "background": await runtime.presence.setOverride(.background)
            case "auto": await runtime.presence.setOverride(nil)
            case nil: break
            case let other?: return ControlProtocol.errorReply(.invalidRequest("presence must be foreground, background or auto (got \(other))"))
            }
            let s = await runtime.presence.refresh()
            return ["ok": true, "presence": .string(s.presence.rawValue), "reason": .string(s.reason),
                    "mode": .string(runtime.config.presence.mode.rawValue)]
        case "status":
            return ["ok": true, "status": await statusProvider()]
        default:
            return ControlProtocol.errorReply(.invalidRequest("unknown op \(req["op"]?.jsonString() ?? "null")"))
        }
    }
}

private final class ResultBox: @unchecked Sendable { var value: JSONValue? }

/// How many control clients are being served.
private final class ClientCount: @unchecked Sendable {
    private let lock = Lock()
    private var n = 0
    func enter(limit: Int) -> Bool { lock.withLock { guard n < limit else { return false }; n += 1; return true } }
    func leave() { lock.withLock { n -= 1 } }
}
