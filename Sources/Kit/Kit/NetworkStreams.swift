import Support

/// Outgoing connections for a bundle (an MCP server over streamable HTTP): plain TCP, or TLS whose
/// certificate chain and host name are verified. TLS lives in the core (OpenSSL is loaded there
/// once), so a bundle gets a verified stream without linking a TLS library of its own.
public protocol NetworkStreams: Sendable {
    /// A connected, non-blocking stream to `host:port`. With `tls`, the handshake is done and the
    /// certificate verified against the system's trust store (or `caFile`, PEM, when given); a
    /// certificate that does not verify is an error, never a warning.
    func open(host: String, port: Int, tls: Bool, caFile: String?, timeout: Duration) throws(TransportError) -> any ByteStream
}

/// Plain TCP only: what a context built outside a node (unit tests) gets.
public struct PlainNetworkStreams: NetworkStreams {
    public init() {}
    public func open(host: String, port: Int, tls: Bool, caFile: String?, timeout: Duration) throws(TransportError) -> any ByteStream {
        if tls { throw TransportError("TLS is not available outside the node") }
        return try TCPSocket.connect(TCPSocket.resolve(host: host, port: port), timeout: timeout)
    }
}
