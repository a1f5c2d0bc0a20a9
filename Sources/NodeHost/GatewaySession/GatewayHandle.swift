import Config
import HostPresence
import Kit
import Store
import Support

/// The daemon's gateway client, which may not exist yet: with no gateway.url, `run` starts
/// everything else (control socket, capabilities, presence) at once and creates the client only
/// after discovery has picked a gateway. Capability events that cannot be sent — no client yet,
/// or not connected — are held here, the latest per event name (a location.update from before
/// the first connect or during an outage still arrives, once), and sent after the next hello-ok.
public actor GatewayHandle {
    private var client: GatewayClient?
    private var runTask: Task<Void, Never>?
    private var held: [(event: String, payload: JSONValue)] = []
    private let log = Logger(component: "gateway")
    private var stopped = false
    private var onReady: (@Sendable (GatewayProtocol.HelloOk) -> Void)?
    private var onDisconnect: (@Sendable () -> Void)?
    private var onEvent: (@Sendable (String, JSONValue?) -> Void)?

    public init() {}

    /// Observes every hello-ok of the client (set before `start`).
    public func setOnReady(_ f: @escaping @Sendable (GatewayProtocol.HelloOk) -> Void) { onReady = f }
    /// Receives gateway events for capabilities (set before `start`).
    public func setOnEvent(_ f: @escaping @Sendable (String, JSONValue?) -> Void) { onEvent = f }
    /// Observes the end of every session that reached hello-ok (set before `start`).
    public func setOnDisconnect(_ f: @escaping @Sendable () -> Void) { onDisconnect = f }

    /// Starts the client's connect loop; false (and ignored) after `stop` or while another client runs.
    @discardableResult
    public func start(_ c: GatewayClient) async -> Bool {
        guard !stopped, client == nil else { return false }
        client = c
        let observer = onReady
        await c.setOnReady { [weak self] hello in
            observer?(hello)
            Task { await self?.sendHeld() }
        }
        if let onDisconnect { await c.setOnDisconnect(onDisconnect) }
        if let onEvent { await c.setOnEvent(onEvent) }
        // A stopClient() while this was setting up has taken the client away again.
        guard client === c, !stopped else { return false }
        runTask = Task { await c.run() }
        return true
    }

    public var current: GatewayClient? { client }

    /// Sends now, or holds until the next hello-ok. True when it was sent now.
    public func sendOrHoldEvent(_ event: String, payload: JSONValue) async -> Bool {
        if await client?.sendEvent(event, payload: payload) != nil { return true }
        held.removeAll { $0.event == event }
        held.append((event, payload))
        return false
    }

    private func sendHeld() async {
        let pending = held
        held.removeAll()
        for e in pending where await client?.sendEvent(e.event, payload: e.payload) == nil {
            // Lost the connection again: keep it for the next one unless a newer one arrived.
            if !held.contains(where: { $0.event == e.event }) { held.append(e) }
        }
        if !pending.isEmpty { log.debug("sent \(pending.count) event(s) held while offline") }
    }

    /// Sends an event now if connected; nothing is held.
    public func sendEventNow(_ event: String, payload: JSONValue) async -> Bool {
        await client?.sendEvent(event, payload: payload) != nil
    }

    /// Calls a method on the current session: its payload or the gateway's error.
    public func call(_ method: String, params: JSONValue, timeout: Duration) async -> Result<JSONValue, GatewayProtocol.GatewayError> {
        guard let client else { return .failure(.init(["code": .string(NodeError.Code.unavailable.rawValue), "message": "not connected to a gateway"])) }
        return await client.call(method, params: params, timeout: timeout)
    }

    public func openStream(_ pathAndQuery: String) async -> Result<any GatewayStream, NodeError> {
        guard let client else { return .failure(NodeError(.unavailable, "not connected to a gateway")) }
        return await client.openStream(pathAndQuery)
    }

    public func request(_ method: String, params: JSONValue) async -> JSONValue? {
        await client?.request(method, params: params)
    }

    public func networkChanged() async { await client?.networkChanged() }
    /// Ends a paused reconnect (or a backoff wait) now; true when the session was paused.
    public func resume(_ why: String) async -> Bool { await client?.resume(why) ?? false }
    public func pairResolved(_ payload: JSONValue) async { await client?.pairResolved(payload) }
    public func systemResumed() async { await client?.systemResumed() }

    /// Ends the current client's session and loop (config reload with new gateway settings); the
    /// handle stays usable: `start` takes the next client, held events wait for it.
    public func stopClient() async {
        let (c, task) = (client, runTask)
        client = nil
        runTask = nil
        await c?.stop()
        await task?.value
    }

    /// Stops `c` if it is still this handle's client (a newer one is left running). True if it was.
    @discardableResult
    public func stopClient(ifCurrent c: GatewayClient) async -> Bool {
        guard client === c else { return false }
        await stopClient()
        return true
    }

    /// The node's command list changed: renew the session so the gateway sees it (see
    /// `GatewayClient.reannounce`).
    public func reannounce() async { await client?.reannounce() }

    /// Stops the client and waits for its loop to end.
    public func stop() async {
        stopped = true
        await client?.stop()
        await runTask?.value
    }
}
