import Support

/// A second WebSocket to the gateway beside the node's session, for one stream of bytes that does
/// not fit into invoke frames (desktop.stream's attach socket, docs/PROTOCOL.md "desktop.stream").
/// The core opens it against the session's own gateway — same scheme, host and port, the gateway's
/// context path, the TLS certificate the session verified or pinned, no Origin header — so a bundle
/// names only a path and query, never a host.
public protocol GatewayStream: Sendable {
    /// Queues one binary message; false once the socket is closing.
    @discardableResult
    func send(binary: [UInt8]) -> Bool
    /// Bytes queued and not yet written to the socket (a sender pauses its source above a limit).
    var bufferedBytes: Int { get }
    /// The next message from the gateway; `.closed` at the end, then again on every call.
    func next() async -> GatewayStreamMessage
    /// Starts the closing handshake.
    func close(code: UInt16, reason: String)
}

public enum GatewayStreamMessage: Sendable, Equatable {
    case binary([UInt8])
    case text(String)
    /// The peer's close code and reason, or why the socket ended without one.
    case closed(code: UInt16?, reason: String)
}

extension GatewayLink {
    /// Opens a stream socket at `pathAndQuery` ("/node-desktop/attach?ticket=…") on this session's
    /// gateway. UNAVAILABLE when the node is offline or the gateway refuses the upgrade.
    public func openStream(_ pathAndQuery: String) async -> Result<any GatewayStream, NodeError> {
        await streamOpener(pathAndQuery)
    }
}
