import Kit
import Support

/// mcp.* command names.
public enum McpCommand: String, CaseIterable, Sendable {
    case call = "mcp.tools.call.v1"
}

/// `mcp.tools.call.v1` params `{server, tool, arguments}`, refused with upstream's messages.
public struct McpCallParams: CommandParams, Equatable {
    public let server: String
    public let tool: String
    public let arguments: JSONValue

    struct Refusal: Error, CustomStringConvertible { let description: String }

    public init(from decoder: Decoder) throws {
        let v = try JSONValue(from: decoder)
        guard let o = v.objectValue else { throw Refusal(description: "MCP tool params must be an object") }
        let server = o["server"]?.stringValue?.trimmed() ?? "", tool = o["tool"]?.stringValue?.trimmed() ?? ""
        guard !server.isEmpty, !tool.isEmpty else { throw Refusal(description: "MCP tool server and tool required") }
        let arguments = o["arguments"] ?? .object([:])
        guard arguments.objectValue != nil else { throw Refusal(description: "MCP tool arguments must be an object") }
        self.server = server; self.tool = tool; self.arguments = arguments
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
