/// The daemon's gateway client, which may not exist yet: with no gateway.url, `run` starts
/// everything else (control socket, capabilities, presence) at once and creates the client only
/// after discovery has picked a gateway. Until then capability events are held here (latest per
/// event name, as the client does while offline) and handed over when the client starts.
public actor GatewayHandle {
    private var client: GatewayClient?
    private var runTask: Task<Void, Never>?
    private var held: [(event: String, payload: JSONValue)] = []
    private var stopped = false
    private var onReady: (@Sendable (GatewayProtocol.HelloOk) -> Void)?

    public init() {}

    /// Observes every hello-ok of the client (set before `start`).
    public func setOnReady(_ f: @escaping @Sendable (GatewayProtocol.HelloOk) -> Void) { onReady = f }

    /// Starts the client's connect loop (ignored after `stop`).
    public func start(_ c: GatewayClient) async {
        guard !stopped, client == nil else { return }
        client = c
        if let onReady { await c.setOnReady(onReady) }
        let pending = held
        held.removeAll()
        for e in pending { _ = await c.sendOrHoldEvent(e.event, payload: e.payload) }
        runTask = Task { await c.run() }
    }

    public var current: GatewayClient? { client }

    public func sendOrHoldEvent(_ event: String, payload: JSONValue) async -> Bool {
        if let client { return await client.sendOrHoldEvent(event, payload: payload) }
        held.removeAll { $0.event == event }
        held.append((event, payload))
        return false
    }

    /// Sends an event now if connected; nothing is held.
    public func sendEventNow(_ event: String, payload: JSONValue) async -> Bool {
        await client?.sendEvent(event, payload: payload) != nil
    }

    public func request(_ method: String, params: JSONValue) async -> JSONValue? {
        await client?.request(method, params: params)
    }

    public func networkChanged() async { await client?.networkChanged() }
    public func systemResumed() async { await client?.systemResumed() }

    /// Stops the client and waits for its loop to end.
    public func stop() async {
        stopped = true
        await client?.stop()
        await runTask?.value
    }
}
