import Support

/// `node.pluginTools.update`: one tool the node offers agents. MCP-backed tools name the server
/// and tool they run (`mcp`) and are run through `mcp.tools.call.v1`. The gateway treats each
/// update as the node's whole catalogue.
public struct PluginToolDescriptor: Sendable, Equatable, Encodable {
    public struct MCPRef: Sendable, Equatable, Encodable {
        public let server: String
        public let tool: String
        public init(server: String, tool: String) { self.server = server; self.tool = tool }
    }
    public let pluginId: String
    public let name: String
    public let description: String
    /// The tool's input (a JSON Schema object).
    public let parameters: JSONValue?
    public let command: String
    public let mcp: MCPRef?

    public init(pluginId: String, name: String, description: String, parameters: JSONValue?, command: String, mcp: MCPRef?) {
        self.pluginId = pluginId; self.name = name; self.description = description
        self.parameters = parameters; self.command = command; self.mcp = mcp
    }
}

/// How a publication (`node.pluginTools.update`, `node.skills.update`) ended, by the reference
/// host's rules: accepted; rejected (do not send the same value again); unsupported by this
/// gateway (stop publishing on this session); or a transient failure (retry with backoff).
public enum PublicationAnswer: Sendable, Equatable {
    case accepted(JSONValue)
    case rejected(String)
    case unsupported(String)
    case transient(String)

    public init(_ result: Result<JSONValue, GatewayCallError>, method: String) {
        switch result {
        case .success(let payload): self = .accepted(payload)
        case .failure(let e):
            // An older gateway: "unknown method: <m>"; on protocol 3 a node may not call it at all.
            if e.message.contains("unknown method") || e.message.contains("unauthorized role: node") {
                self = .unsupported(e.description)
            } else if e.code == NodeError.Code.invalidRequest.rawValue {
                self = .rejected(e.description)
            } else {
                self = .transient(e.description)
            }
        }
    }

    /// The waits between attempts of one value: 250 ms doubling to 5 s.
    public static func retryDelay(attempt: Int) -> Duration {
        .milliseconds(min(5_000, 250 << min(attempt, 5)))
    }
}

extension GatewayLink {
    /// Publishes the node's whole tool catalogue (`[]` withdraws every tool).
    public func updatePluginTools(_ tools: [PluginToolDescriptor]) async -> PublicationAnswer {
        let params: JSONValue = ["tools": (try? JSONValue.from(tools)) ?? .array([])]
        return PublicationAnswer(await call("node.pluginTools.update", params, .seconds(10)), method: "node.pluginTools.update")
    }
}
