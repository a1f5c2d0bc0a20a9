import GatewaySession
import Kit
import Support

/// The local control socket speaks one JSON object per line each way:
///   {"op":"invoke","command":"device.info","params":{…},"timeoutMs":30000}
///     → {"ok":true,"payload":…} | {"ok":false,"error":{"code":…,"message":…}}
///   {"op":"presence","set":"foreground"|"background"|"auto"} → {"ok":true,"presence":…,"reason":…}
///   {"op":"status"} → {"ok":true,"status":{…}}
///   {"op":"commands"} → {"ok":true,"commands":["device.info",…]} (the commands advertised now)
///   {"op":"capability","name":"mcp","request":{…}} → {"ok":true,"reply":…} (ControlQueryable)
///   {"op":"reconnect"} → {"ok":true,"reconnect":{"resumed":["node"|"operator"…],"connection":…}}
///   {"op":"reconnect","fresh":true} → the same after a new session from the config and the stored
///     gateway (what `openclaw-node pair` asks of a running daemon)
public enum ControlProtocol {
    /// What a local invoke's handler fits its payload to: a gateway's default `policy.maxPayload`
    /// (25 MiB), so `openclaw-node invoke` shows what a gateway would get — never the limit of
    /// whichever gateway the daemon happens to be connected to.
    public static let maxPayloadBytes = GatewayProtocol.defaultMaxPayload

    static func errorReply(_ e: NodeError) -> JSONValue { ["ok": false, "error": e.json] }
}
