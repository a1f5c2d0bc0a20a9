/// The daemon's gateway client, which may not exist yet: with no gateway.url, `run` starts
/// everything else (control socket, capabilities, presence) at once and creates the client only
/// after discovery has picked a gateway. Until then capability events are held here (latest per
/// event name, as the client does while offline) and handed over when the client starts.
public actor GatewayHandle {
    private var client: GatewayClient?
    private var runTask: Task<Void, Never>?
    private var held: [(event: String, payload: JSONValue)] = []
    private var stopped = false

    public init() {}

    /// Starts the client's connect loop (ignored after `stop`).
    public func start(_ c: GatewayClient) async {
        guard !stopped, client == nil else { return }
        client = c
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

    public func networkChanged() async { await client?.networkChanged() }
    public func systemResumed() async { await client?.systemResumed() }

    /// Stops the client and waits for its loop to end.
    public func stop() async {
        stopped = true
        await client?.stop()
        await runTask?.value
    }
}
