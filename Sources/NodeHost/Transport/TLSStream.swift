import COpenSSL
import Config
import Glibc
import Kit
import Store
import Support

/// What the TLS handshake learned about the server, for the pinning decision made by the caller.
package struct TLSPeerInfo: Sendable {
    /// SHA-256 of the leaf certificate DER, lower-case hex (the gateway's `gatewayTlsSha256`).
    package let fingerprint: String
    /// nil when the chain and hostname verified against the system trust store; else why not.
    package let verifyError: String?
}

/// TLS over a TCPSocket (OpenSSL, TLS ≥ 1.2, SNI). Certificate checks are recorded during the
/// handshake and decided afterwards (system trust, pin, or trust-on-first-use) by the caller.
/// The server side (`init(accepting:)`) shares its identity's context, which it does not free.
package final class TLSStream: ByteStream {
    private let tcp: TCPSocket
    private var ctx: OpaquePointer?
    private var ssl: OpaquePointer?
    private let o: OpenSSLLibrary
    private let ownsContext: Bool

    package var fd: Int32 { tcp.fd }

    package init(tcp: TCPSocket, host: String, timeout: Duration, caFile: String? = nil) throws(TransportError) {
        self.tcp = tcp
        ownsContext = true
        do { o = try OpenSSLLibrary.shared.get() } catch { throw TransportError("TLS: \(error.description)") }
        guard let ctx = o.ctxNew(o.tlsClientMethod()) else { throw TransportError("TLS: cannot create context") }
        self.ctx = ctx
        o.setMinProtocol(ctx, TLS1_2_VERSION)
        if let caFile { _ = o.ctxLoadVerifyLocations(ctx, caFile, nil) } else { _ = o.ctxSetDefaultVerifyPaths(ctx) }
        // Verification runs but never aborts the handshake: the pin/TOFU policy decides afterwards.
        o.ctxSetVerify(ctx, SSL_VERIFY_NONE, nil)
        guard let ssl = o.sslNew(ctx) else { throw TransportError("TLS: cannot create session") }
        self.ssl = ssl
        _ = o.sslSetFd(ssl, tcp.fd)
        let bare = host.hasPrefix("[") ? String(host.dropFirst().dropLast()) : host
        if !ResolvedAddress.isIPLiteral(bare) { o.setServerName(ssl, bare) }
        _ = o.sslSet1Host(ssl, bare)
        try handshake(with: " with \(host)", timeout: timeout) { o.sslConnect(ssl) }
    }

    /// The server side of a handshake on an accepted socket, within `timeout`.
    package init(accepting tcp: TCPSocket, context: OpaquePointer, library: OpenSSLLibrary, timeout: Duration) throws(TransportError) {
        self.tcp = tcp
        o = library
        ownsContext = false
        ctx = context
        guard let ssl = o.sslNew(context) else { throw TransportError("TLS: cannot create session") }
        self.ssl = ssl
        _ = o.sslSetFd(ssl, tcp.fd)
        try handshake(with: "", timeout: timeout) { o.sslAccept(ssl) }
    }

    /// Runs `step` (SSL_connect or SSL_accept on the non-blocking socket) until the handshake is
    /// done, waiting for the socket as OpenSSL asks, within `timeout`. `peer` names the other side.
    private func handshake(with peer: String, timeout: Duration, _ step: () -> Int32) throws(TransportError) {
        let deadline = ContinuousClock.now + timeout
        while true {
            let rc = step()
            if rc == 1 { return }
            let err = o.sslGetError(ssl, rc)
            let left = deadline - .now
            guard left > .zero else { throw TransportError("TLS handshake\(peer) timed out") }
            if err == SSL_ERROR_WANT_READ { _ = pollOnce(tcp.fd, events: Int16(POLLIN), timeout: left); continue }
            if err == SSL_ERROR_WANT_WRITE { _ = pollOnce(tcp.fd, events: Int16(POLLOUT), timeout: left); continue }
            throw TransportError("TLS handshake\(peer) failed: \(errorQueue())")
        }
    }

    deinit { close() }


    func errorQueue() -> String { o.errorQueue() ?? "connection closed during handshake" }

    package func peerInfo() -> TLSPeerInfo? {
        guard let ssl, let cert = o.sslGet1PeerCertificate(ssl) else { return nil }
        defer { o.x509Free(cert) }
        var md = [UInt8](repeating: 0, count: 32)
        var len: UInt32 = 0
        _ = o.x509Digest(cert, o.sha256(), &md, &len)
        let result = o.sslGetVerifyResult(ssl)
        let why = result == X509_V_OK ? nil : o.verifyCertErrorString(result).map { String(cString: $0) } ?? "error \(result)"
        return TLSPeerInfo(fingerprint: Encoding.hex(md.prefix(Int(len))), verifyError: why)
    }

    package func read(_ buf: UnsafeMutableRawBufferPointer) -> IOStep {
        guard let ssl else { return .eof }
        var n = 0
        let rc = o.sslReadEx(ssl, buf.baseAddress, buf.count, &n)
        if rc == 1 { return .bytes(n) }
        return step(o.sslGetError(ssl, 0))
    }

    package func write(_ buf: UnsafeRawBufferPointer) -> IOStep {
        guard let ssl else { return .eof }
        var n = 0
        let rc = o.sslWriteEx(ssl, buf.baseAddress, buf.count, &n)
        if rc == 1 { return .bytes(n) }
        return step(o.sslGetError(ssl, 0))
    }

    private func step(_ err: Int32) -> IOStep {
        switch err {
        case SSL_ERROR_WANT_READ: return .wouldBlock(wantWrite: false)
        case SSL_ERROR_WANT_WRITE: return .wouldBlock(wantWrite: true)
        case SSL_ERROR_ZERO_RETURN: return .eof
        case SSL_ERROR_SYSCALL:
            let q = errorQueue()
            return errno == 0 || q == "connection closed during handshake" ? .eof : .failed("TLS: \(String(cString: strerror(errno)))")
        default: return .failed("TLS: \(errorQueue())")
        }
    }

    package var hasBufferedInput: Bool { ssl.map { o.sslPending($0) > 0 } ?? false }

    package func close() {
        if let ssl { _ = o.sslShutdown(ssl); o.sslFree(ssl) }
        ssl = nil
        if let ctx, ownsContext { o.ctxFree(ctx) }
        ctx = nil
        tcp.close()
    }
}
