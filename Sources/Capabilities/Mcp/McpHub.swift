import Kit
import Support

/// The configured servers and what they publish: starts them, builds the catalogue from their
/// offered tools, hands it to the publisher on every change, and routes calls to the right server.
actor McpHub {
    let settings: McpSettings
    private let context: CapabilityContext
    private let log = Logger(component: "mcp")
    private var runners: [String: McpServerRunner] = [:]
    let publisher = ToolPublisher()
    private var catalogue: [PluginToolDescriptor] = []
    private var started = false
    /// The servers' first starts and the first catalogue after them; stopAll ends them.
    private let starting = OwnedTasks()

    init(settings: McpSettings, context: CapabilityContext) {
        self.settings = settings; self.context = context
    }

    private func runner(_ name: String) -> McpServerRunner? {
        if let r = runners[name] { return r }
        guard let config = settings.servers.first(where: { $0.name == name }) else { return nil }
        let r = McpServerRunner(config: config, context: context) { [weak self] in Task { await self?.rebuild() } }
        runners[name] = r
        return r
    }

    /// The daemon's start: every server starts now, in the background. At start-up rather than on
    /// first use, because agents only learn of a tool from the published catalogue, and that needs
    /// each server's tool list.
    func startAll() {
        guard !started else { return }
        started = true
        for (name, why) in settings.skipped { log.info("server \(name) skipped: \(why)") }
        let all = settings.servers.compactMap { runner($0.name) }
        for r in all { starting.start { await r.start() } }
        // The first catalogue once every server's first attempt is over (or 30 s passed), so a
        // gateway does not see a half-empty list first.
        starting.start {
            for r in all { await r.settled(within: .seconds(30)) }
            await self.rebuild()
        }
    }

    func stopAll() async {
        // Stopped servers settle, which ends the first-catalogue wait.
        for r in runners.values { await r.stop() }
        await starting.cancelAll()
    }

    /// A call outside the daemon: the server starts first.
    func call(_ p: McpCallParams, timeout: Duration) async -> Result<JSONValue, NodeError> {
        guard let r = runner(p.server) else { return .failure(McpErrors.serverUnavailable(p.server)) }
        if !started { _ = await r.ensureStarted() }
        return await r.call(p.tool, arguments: .object(p.arguments), timeout: timeout)
    }

    private func rebuild() async {
        var offered: [(server: String, tools: [McpTool])] = []
        for s in settings.servers { if let r = runners[s.name] { offered.append((s.name, await r.offered)) } }
        let (descriptors, leftOut) = ToolCatalog.build(offered)
        for line in leftOut { log.warn("tool not published: \(line)") }
        catalogue = descriptors
        await publisher.update(descriptors)
    }

    /// The metrics of `ReportsMetrics`: servers by state, each server's restarts, tools published.
    func metrics() async -> [MetricFamily] {
        var byState = Dictionary(uniqueKeysWithValues: McpServerRunner.State.allCases.map { ($0.rawValue, 0) })
        var restarts: [MetricFamily.Sample] = []
        for s in settings.servers {
            guard let r = runners[s.name] else { byState["idle", default: 0] += 1; continue }
            byState[await r.state.rawValue, default: 0] += 1
            restarts.append(.init([("server", s.name)], Double(await r.restarts)))
        }
        return [
            MetricFamily("mcp_servers", .gauge, "Configured MCP servers, by state (ready: its tools are offered).",
                         byState.keys.sorted().map { .init([("state", $0)], Double(byState[$0]!)) }),
            MetricFamily("mcp_server_restarts_total", .counter, "Times an MCP server was started again after it ended or failed.", restarts),
            MetricFamily("mcp_tools_published", .gauge, "MCP tools in the catalogue published to the gateway.", value: Double(catalogue.count)),
        ]
    }

    /// `mcp list`: each server with its state and tools and their published names. Outside the
    /// daemon, the servers are started first.
    func list() async -> JSONValue {
        if !started { for s in settings.servers { _ = await runner(s.name)?.ensureStarted() } }
        let names = Dictionary(catalogue.compactMap { d in d.mcp.map { ("\($0.server)\u{0}\($0.tool)", d.name) } }, uniquingKeysWith: { a, _ in a })
        var servers: [JSONValue] = []
        for s in settings.servers {
            guard let r = runner(s.name) else { continue }
            let offered = Set(await r.offered.map(\.name))
            let tools: [JSONValue] = await r.listed.map { t in
                var o: [String: JSONValue] = ["tool": .string(t.name), "offered": .bool(offered.contains(t.name))]
                if let n = names["\(s.name)\u{0}\(t.name)"] { o["publishedAs"] = .string(n) }
                return .object(o)
            }
            var o: [String: JSONValue] = [
                "name": .string(s.name), "state": .string(await r.state.rawValue),
                "transport": .string(s.transport.kindText), "restarts": .number(Double(await r.restarts)), "tools": .array(tools),
            ]
            if let w = await r.why { o["why"] = .string(w) }
            if let e = await r.endpoint { o["endpoint"] = .string(e) }
            if let i = await r.serverInfo { o["serverInfo"] = .string(i) }
            servers.append(.object(o))
        }
        for (name, why) in settings.skipped { servers.append(["name": .string(name), "state": "skipped", "why": .string(why), "tools": []]) }
        return ["servers": .array(servers), "publication": await publisher.status]
    }
}

extension McpServerConfig.Transport {
    var kindText: String {
        switch self {
        case .stdio(_, _, _, _, let sandbox, _, _): return sandbox == .bwrap ? "stdio (bubblewrap)" : "stdio"
        case .http: return "streamable-http"
        }
    }
}
