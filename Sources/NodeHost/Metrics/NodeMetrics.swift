import GatewaySession
import HostPresence
import Kit
import Registry
import Support

/// Everything the metrics endpoint says about the running node, gathered at each scrape from the
/// parts that already know it: the dispatcher's counts, the gateway session's state, presence,
/// the command table, the capabilities that report numbers of their own, and /proc/self.
public struct NodeMetrics: Sendable {
    public static let prefix = "openclaw_node_"

    let dispatcher: Dispatcher
    let gateway: GatewayStatus
    let presence: PresenceMonitor
    /// Families the daemon knows of besides these parts (the last update check), unprefixed.
    let extra: @Sendable () -> [MetricFamily]

    public init(dispatcher: Dispatcher, gateway: GatewayStatus, presence: PresenceMonitor,
                extra: @escaping @Sendable () -> [MetricFamily] = { [] }) {
        self.dispatcher = dispatcher; self.gateway = gateway; self.presence = presence; self.extra = extra
    }

    /// The exposition text of one scrape.
    public func text() async -> String { MetricsText.render(await families()) }

    func families() async -> [MetricFamily] {
        var node: [MetricFamily] = []
        node.append(MetricFamily("build_info", .gauge, "The running version (value 1).",
                                 [.init([("version", NodeVersion.version)], 1)]))

        let state = await gateway.state
        node.append(MetricFamily("gateway_connected", .gauge, "1 while a gateway session is up.", value: state.name == "connected" ? 1 : 0))
        node.append(MetricFamily("gateway_state", .gauge, "The gateway session's state (1 for the current one).",
                                 GatewayStatus.State.names.map { .init([("state", $0)], $0 == state.name ? 1 : 0) }))
        node.append(MetricFamily("gateway_connects_total", .counter, "Gateway sessions established (the first connect and every reconnect).",
                                 value: Double(await gateway.connects)))

        let stats = dispatcher.stats.snapshot
        node.append(MetricFamily("invokes_total", .counter, "Invokes answered, by command and outcome (ok or the error code).",
                                 stats.outcomes.keys.sorted().flatMap { command in
                                     stats.outcomes[command]!.keys.sorted().map { outcome in
                                         MetricFamily.Sample([("command", command), ("outcome", outcome)], Double(stats.outcomes[command]![outcome]!))
                                     }
                                 }))
        node.append(MetricFamily("invoke_duration_seconds", .histogram, "How long invokes took, from arrival to answer, by command.",
                                 stats.durations.keys.sorted().flatMap { command in histogram(command, stats.durations[command]!) }))
        node.append(MetricFamily("invokes_in_flight", .gauge, "Invokes running now.", value: Double(await dispatcher.inFlightCount)))
        node.append(MetricFamily("invokes_in_flight_limit", .gauge, "Invokes that may run at once (more are answered NODE_BUSY).",
                                 value: Double(dispatcher.maxInFlight)))

        let registry = dispatcher.registry
        let entries = registry.entries.sorted { $0.capability.name < $1.capability.name }
        node.append(MetricFamily("capability_enabled", .gauge, "1 when the capability is enabled in the config.",
                                 entries.map { .init([("capability", $0.capability.name)], $0.enabled ? 1 : 0) }))
        node.append(MetricFamily("capability_available", .gauge, "1 when the capability is advertised (enabled and usable on this device).",
                                 entries.map { .init([("capability", $0.capability.name)], $0.advertised ? 1 : 0) }))
        node.append(MetricFamily("presence_foreground", .gauge, "1 while someone is at the device (foreground-only commands may run).",
                                 value: await presence.current == .foreground ? 1 : 0))

        node += extra()
        // What the capabilities report themselves; a name the core already uses is not taken twice.
        let taken = Set(node.map(\.name))
        for e in entries where e.advertised {
            guard let reporter = e.capability as? any ReportsMetrics else { continue }
            for f in await reporter.metrics() where !taken.contains(f.name) && Self.isValidName(f.name) { node.append(f) }
        }
        for i in node.indices { node[i].name = Self.prefix + node[i].name }
        return node + ProcessMetrics.families()
    }

    private func histogram(_ command: String, _ d: InvokeStats.Durations) -> [MetricFamily.Sample] {
        var out = zip(InvokeStats.bucketBounds, d.buckets).map { bound, count in
            MetricFamily.Sample(suffix: "_bucket", [("command", command), ("le", MetricsText.number(bound))], Double(count))
        }
        out.append(.init(suffix: "_bucket", [("command", command), ("le", "+Inf")], Double(d.count)))
        out.append(.init(suffix: "_sum", [("command", command)], d.sum))
        out.append(.init(suffix: "_count", [("command", command)], Double(d.count)))
        return out
    }

    /// Prometheus's metric name rule: [a-zA-Z_:][a-zA-Z0-9_:]*.
    static func isValidName(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, first.isASCII, first.properties.isAlphabetic || first == "_" else { return false }
        return name.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "_" || $0 == ":") }
    }
}
