import Kit
import Support

/// mcp.* command names.
public enum McpCommand: String, CaseIterable, Sendable {
    case call = "mcp.tools.call.v1"
}

/// `mcp.tools.call.v1` params `{server, tool, arguments}`, as the manifest row describes them;
/// refused with upstream's messages (its callers match on them).
public struct McpCallParams: CommandParams, Equatable {
    public var server: String
    public var tool: String
    public var arguments: [String: JSONValue]

    public init(server: String, tool: String, arguments: [String: JSONValue] = [:]) {
        self.server = server; self.tool = tool; self.arguments = arguments
    }

    /// Names are trimmed as upstream trims them; blank is missing.
    public func validated() throws(NodeError) -> McpCallParams {
        var p = self
        p.server = server.trimmed(); p.tool = tool.trimmed()
        guard !p.server.isEmpty, !p.tool.isEmpty else { throw NodeError.invalidRequest("MCP tool server and tool required") }
        return p
    }

    public static func refusal(_ problem: NodeError, params: InvokeParams) -> NodeError {
        let o: [String: JSONValue]
        switch params {
        case .none, .value(.null): o = [:]
        case .value(.object(let object)): o = object
        default: return NodeError.invalidRequest("MCP tool params must be an object")
        }
        guard o["server"]?.stringValue != nil, o["tool"]?.stringValue != nil else { return NodeError.invalidRequest("MCP tool server and tool required") }
        guard (o["arguments"] ?? .null) == .null || o["arguments"]?.objectValue != nil else {
            return NodeError.invalidRequest("MCP tool arguments must be an object")
        }
        return problem
    }
}

/// The MCP_* error codes and upstream's messages for them.
enum McpErrors {
    static let serverUnavailableCode: NodeError.Code = "MCP_SERVER_UNAVAILABLE"
    static let toolUnavailableCode: NodeError.Code = "MCP_TOOL_UNAVAILABLE"
    static let toolTimeout: NodeError.Code = "MCP_TOOL_TIMEOUT"
    static let toolError: NodeError.Code = "MCP_TOOL_ERROR"

    static func serverUnavailable(_ server: String) -> NodeError { NodeError(serverUnavailableCode, verbatim: "MCP server \"\(server)\" is unavailable") }
    static func serverDisconnected(_ server: String) -> NodeError { NodeError(serverUnavailableCode, verbatim: "MCP server \"\(server)\" disconnected") }
    static func toolUnavailable(_ tool: String, server: String) -> NodeError {
        NodeError(toolUnavailableCode, verbatim: "MCP tool \"\(tool)\" is unavailable on server \"\(server)\"")
    }

    /// An error text as the caller sees it: URLs (which may carry tokens) replaced, at most 1024 characters.
    static func redact(_ text: String) -> String {
        var out = "", word = ""
        func flush() { out += word.contains("://") ? "<url>" : word; word = "" }
        for c in text { if c == " " || c == "\n" || c == "\"" || c == "'" { flush(); out.append(c) } else { word.append(c) } }
        flush()
        return String(out.prefix(1024))
    }
}
