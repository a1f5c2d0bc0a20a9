import Support

/// One JSON-RPC 2.0 message from an MCP server, sorted by what the client does with it.
enum JSONRPCMessage: Sendable, Equatable {
    /// The answer to one of our requests: its result or its error.
    case response(id: JSONValue, result: Result<JSONValue, JSONRPCError>)
    /// The server asks us something (ping; sampling and the like, which this client does not offer).
    case request(id: JSONValue, method: String, params: JSONValue?)
    case notification(method: String, params: JSONValue?)

    /// nil for what is not a JSON-RPC 2.0 message (logged and dropped by the client).
    init?(_ v: JSONValue) {
        guard v["jsonrpc"]?.stringValue == "2.0" else { return nil }
        if let method = v["method"]?.stringValue {
            if let id = v["id"], id != .null { self = .request(id: id, method: method, params: v["params"]) }
            else { self = .notification(method: method, params: v["params"]) }
        } else if let id = v["id"] {
            if let e = v["error"] {
                self = .response(id: id, result: .failure(JSONRPCError(code: e["code"]?.intValue ?? -32603,
                                                                       message: e["message"]?.stringValue ?? "error without a message")))
            } else {
                self = .response(id: id, result: .success(v["result"] ?? .null))
            }
        } else {
            return nil
        }
    }

    static func request(id: Int, method: String, params: JSONValue?) -> JSONValue {
        var o: [String: JSONValue] = ["jsonrpc": "2.0", "id": .number(Double(id)), "method": .string(method)]
        if let params { o["params"] = params }
        return .object(o)
    }

    static func notification(_ method: String, params: JSONValue? = nil) -> JSONValue {
        var o: [String: JSONValue] = ["jsonrpc": "2.0", "method": .string(method)]
        if let params { o["params"] = params }
        return .object(o)
    }

    static func result(id: JSONValue, _ result: JSONValue) -> JSONValue { ["jsonrpc": "2.0", "id": id, "result": result] }

    static func error(id: JSONValue, code: Int, message: String) -> JSONValue {
        ["jsonrpc": "2.0", "id": id, "error": ["code": .number(Double(code)), "message": .string(message)]]
    }
}

/// A JSON-RPC error object from the server.
struct JSONRPCError: Error, Sendable, Equatable, CustomStringConvertible {
    let code: Int
    let message: String
    var description: String { "\(message) (JSON-RPC error \(code))" }
    static let methodNotFound = -32601
}

/// Why talking to a server failed, in the terms the call's error codes need.
enum McpFailure: Error, Sendable, Equatable, CustomStringConvertible {
    /// The transport is gone or never came up (the process exited, the HTTP server is down).
    case disconnected(String)
    case timeout(String)
    /// The server answered with an error, or with something that is not MCP.
    case server(String)

    var description: String {
        switch self {
        case .disconnected(let s), .timeout(let s), .server(let s): return s
        }
    }
}

/// How messages move to and from one server. `receive` is called for every message in the order
/// they arrived; `closed` once, when the transport ends for good (with why).
protocol McpTransport: Sendable {
    func start(receive: @escaping @Sendable (JSONValue) -> Void, closed: @escaping @Sendable (String) -> Void) async throws(McpFailure)
    /// Sends one message; a request's answer comes back through `receive`.
    func send(_ message: JSONValue) async throws(McpFailure)
    /// After initialize: the negotiated protocol version (HTTP sends it as a header on every request).
    func negotiated(protocolVersion: String) async
    /// Ends it: the process is stopped, the HTTP session deleted.
    func close() async
    /// For logs and `mcp list`: "pid 1234", "http://127.0.0.1:8931/mcp".
    var endpoint: String { get async }
}
