import DeviceInfo
import Kit
import Support

/// Sends `node.host.stats` right after hello-ok and then every `period` (60 s; the
/// `OPENCLAW_NODE_HOST_STATS_INTERVAL_MS` environment variable shortens it for tests), timed by
/// the node's clock. A refusal or `handled: false` is logged once per session and not retried: the
/// next sample goes out at its time anyway.
struct HostStatsReporter: Sendable {
    static let defaultPeriod: Duration = .seconds(60)

    let stateDirectory: String
    let period: Duration
    let clock: any NodeClock

    init(stateDirectory: String, clock: any NodeClock = SystemClock(),
         period: Duration = ProcessEnvironment.current["OPENCLAW_NODE_HOST_STATS_INTERVAL_MS"].flatMap { Int($0) }
             .map { .milliseconds(max(100, $0)) } ?? defaultPeriod) {
        self.stateDirectory = stateDirectory; self.clock = clock; self.period = period
    }

    /// Runs until cancelled (the session ends). `send` sends one node.event and answers the reply.
    func run(log: Logger, send: @Sendable (JSONValue) async -> Result<JSONValue, GatewayProtocol.GatewayError>) async {
        var complained = false
        while !Task.isCancelled {
            let stats = HostStats.sample(stateDirectory: stateDirectory)
            let payload = (try? JSONValueEncoder.encode(stats)) ?? .object([:])
            let problem: String?
            switch await send(GatewayProtocol.nodeEvent("node.host.stats", payload: payload)) {
            case .success(let reply):
                let answer = GatewayProtocol.NodeEventAnswer(reply)
                problem = answer.handled ? nil : "the gateway did not use it (\(answer.reason ?? "no reason given"))"
            case .failure(let e):
                problem = "not accepted: \(e)"
            }
            if let problem, !complained {
                complained = true
                log.info("node.host.stats: \(problem); not retried (the next one goes out in \(period))")
            }
            do { try await clock.sleep(for: period) } catch { return }
        }
    }
}
