import Support

/// Incoming TLS for a bundle's server (`mcp serve --http` on a LAN address). As with outgoing
/// streams (NetworkStreams), TLS lives in the core, which loads OpenSSL once; a bundle gets a
/// server identity and accepted streams without linking a TLS library of its own.
public protocol TLSServers: Sendable {
    /// The server identity in these PEM files: the certificate (chain, leaf first) and its private
    /// key. The key must be readable by its owner only; a key that does not match the certificate,
    /// an unreadable file or a key others can read is an error that says which.
    func identity(certificateFile: String, keyFile: String) throws(TransportError) -> any TLSServerIdentity
}

public protocol TLSServerIdentity: Sendable {
    /// What a client is shown (the certificate's subject and validity), for the log.
    var summary: String { get }
    /// The server side of a TLS handshake (TLS 1.2 or newer) on an accepted, non-blocking socket,
    /// within `timeout`; the stream then reads and writes plaintext. Takes `fd` over in every case:
    /// a failed handshake closes it.
    func accept(fd: Int32, timeout: Duration) throws(TransportError) -> any ByteStream
}
