import Config
import Kit
import Support

/// `mcp`: the tools of the device's MCP servers for agents. Declared even with no servers, so
/// that servers added later need no new approval of the node's commands.
struct McpCapability: Capability, CapabilityLifecycle, GatewaySessionAware, SelfDiagnosing, ControlQueryable, ReportsMetrics {
    let manifest: BundleManifest
    let hub: McpHub
    let context: CapabilityContext

    var handlers: [CommandHandler] { [
        CommandHandler(McpCommand.call.rawValue, params: McpCallParams.self) { [hub] (p: McpCallParams, ctx: InvocationContext) async throws(NodeError) -> JSONValue in
            // Upstream: min(invoke timeoutMs or 120 s, the server's own). The call ends a moment
            // before the invoke's deadline, so its own timeout answers MCP_TOOL_TIMEOUT to the
            // gateway instead of the dispatcher's deadline dropping the result.
            let timeout = ctx.invokeDeadline.bounding(.seconds(120), endingBefore: .milliseconds(250), atLeast: .milliseconds(1))
            switch await hub.call(p, timeout: timeout) {
            case .success(let result): return result
            case .failure(let e): throw e
            }
        },
    ] }

    func availability() async -> Availability { .available }

    func start() async -> Availability {
        await hub.startAll()
        return .available
    }

    func shutdown() async {
        await hub.publisher.stop()
        await hub.stopAll()
    }
    func metrics() async -> [MetricFamily] { await hub.metrics() }

    func gatewayConnected(_ link: GatewayLink) async { await hub.publisher.connected(link) }
    func gatewayDisconnected() async { await hub.publisher.disconnected() }

    func controlQuery(_ request: JSONValue) async -> Result<JSONValue, NodeError> {
        switch request["op"]?.stringValue {
        case "list": return .success(await hub.list())
        default: return .failure(.invalidRequest("mcp control queries: {\"op\":\"list\"}"))
        }
    }

    /// Each server as doctor sees it: started on its own for the check (and stopped again), so it
    /// says whether it starts, initializes and lists its tools, whatever the daemon is doing.
    func diagnose() async -> [Diagnosis] {
        let settings = hub.settings
        var out: [Diagnosis] = []
        if settings.servers.isEmpty && settings.skipped.isEmpty {
            out.append(Diagnosis(.ok, "no MCP servers configured (capabilities.mcp.servers); mcp.tools.call.v1 is declared for later"))
        }
        for (name, why) in settings.skipped { out.append(Diagnosis(.warn, "server \(name) skipped: \(why)")) }
        for s in settings.servers {
            let probe = McpServerRunner(config: s, context: context) {}
            await probe.start()
            let state = await probe.state
            if state == .ready {
                let listed = await probe.listed.count, offered = await probe.offered.count
                out.append(Diagnosis(.ok, "server \(s.name) (\(s.transport.kindText)): \(await probe.serverInfo ?? "ready"), \(listed) tools, \(offered) offered"))
            } else {
                out.append(Diagnosis(.fail, "server \(s.name) (\(s.transport.kindText)): \(await probe.why ?? "did not start"); check its command/url in capabilities.mcp.servers.\(s.name)"))
            }
            await probe.stop()
        }
        return out
    }
}

enum McpCommands {
    static func capability(context: CapabilityContext) -> McpCapability {
        // Header values expand ${NAME} from the environment and the withheld secrets.
        let settings = McpSettings(context.section, environment: context.environment.merging(context.secrets) { _, held in held })
        return McpCapability(manifest: context.manifest, hub: McpHub(settings: settings, context: context), context: context)
    }
}
