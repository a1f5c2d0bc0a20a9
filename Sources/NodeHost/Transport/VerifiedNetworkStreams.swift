import Kit
import Support

/// The runtime's `NetworkStreams` for bundles: TCP, and TLS that must verify (system trust store
/// or the given CA file, and the host name). Unlike the gateway's connection there is no pin and
/// no trust-on-first-use: a bundle's server is an ordinary HTTPS server.
package struct VerifiedNetworkStreams: NetworkStreams {
    package init() {}

    package func open(host: String, port: Int, tls: Bool, caFile: String?, timeout: Duration) throws(TransportError) -> any ByteStream {
        let tcp = try TCPSocket.connect(TCPSocket.resolve(host: host, port: port), timeout: timeout)
        guard tls else { return tcp }
        let stream = try TLSStream(tcp: tcp, host: host, timeout: timeout, caFile: caFile)
        guard let peer = stream.peerInfo() else { stream.close(); throw TransportError("\(host) sent no certificate") }
        if let why = peer.verifyError {
            stream.close()
            throw TransportError("the certificate of \(host) is not trusted (\(why))\(caFile == nil ? "; for a private CA set caFile" : "")")
        }
        return stream
    }
}
