import COpenSSL
import Config
import FoundationEssentials
import Glibc
import HostPresence
import Kit
import Registry
import Store
import Support

/// What the TLS handshake learned about the server, for the pinning decision made by the caller.
struct TLSPeerInfo: Sendable {
    /// SHA-256 of the leaf certificate DER, lower-case hex (the gateway's `gatewayTlsSha256`).
    let fingerprint: String
    /// nil when the chain and hostname verified against the system trust store; else why not.
    let verifyError: String?
}

/// TLS over a TCPSocket (OpenSSL, TLS ≥ 1.2, SNI). Certificate checks are recorded during the
/// handshake and decided afterwards (system trust, pin, or trust-on-first-use) by the caller.
final class TLSStream: ByteStream {
    private let tcp: TCPSocket
    private var ctx: OpaquePointer?
    private var ssl: OpaquePointer?

    var fd: Int32 { tcp.fd }

    init(tcp: TCPSocket, host: String, timeout: Duration, caFile: String? = nil) throws(TransportError) {
        self.tcp = tcp
        guard let ctx = SSL_CTX_new(TLS_client_method()) else { throw TransportError("TLS: cannot create context") }
        self.ctx = ctx
        _ = copenssl_set_min_proto(ctx, TLS1_2_VERSION)
        if let caFile { SSL_CTX_load_verify_locations(ctx, caFile, nil) } else { SSL_CTX_set_default_verify_paths(ctx) }
        // Verification runs but never aborts the handshake: the pin/TOFU policy decides afterwards.
        SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, nil)
        guard let ssl = SSL_new(ctx) else { throw TransportError("TLS: cannot create session") }
        self.ssl = ssl
        SSL_set_fd(ssl, tcp.fd)
        let bare = host.hasPrefix("[") ? String(host.dropFirst().dropLast()) : host
        if !TLSStream.isIPLiteral(bare) { _ = copenssl_set_sni(ssl, bare) }
        SSL_set1_host(ssl, bare)
        let deadline = ContinuousClock.now + timeout
        while true {
            let rc = SSL_connect(ssl)
            if rc == 1 { break }
            let err = SSL_get_error(ssl, rc)
            let left = deadline - .now
            guard left > .zero else { throw TransportError("TLS handshake with \(host) timed out") }
            if err == SSL_ERROR_WANT_READ { _ = pollOnce(tcp.fd, events: Int16(POLLIN), timeout: left); continue }
            if err == SSL_ERROR_WANT_WRITE { _ = pollOnce(tcp.fd, events: Int16(POLLOUT), timeout: left); continue }
            throw TransportError("TLS handshake with \(host) failed: \(TLSStream.errorQueue())")
        }
    }

    deinit { close() }

    static func isIPLiteral(_ s: String) -> Bool {
        var a4 = in_addr(), a6 = in6_addr()
        return inet_pton(AF_INET, s, &a4) == 1 || inet_pton(AF_INET6, s, &a6) == 1
    }

    static func errorQueue() -> String {
        var parts: [String] = []
        while case let e = ERR_get_error(), e != 0 {
            var buf = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(e, &buf, buf.count)
            parts.append(String(cBuffer: buf))
        }
        return parts.isEmpty ? "connection closed during handshake" : parts.joined(separator: "; ")
    }

    func peerInfo() -> TLSPeerInfo? {
        guard let ssl, let cert = SSL_get1_peer_certificate(ssl) else { return nil }
        defer { X509_free(cert) }
        var md = [UInt8](repeating: 0, count: 32)
        var len: UInt32 = 0
        X509_digest(cert, EVP_sha256(), &md, &len)
        let result = SSL_get_verify_result(ssl)
        let why = result == X509_V_OK ? nil : String(cString: X509_verify_cert_error_string(result))
        return TLSPeerInfo(fingerprint: Encoding.hex(md.prefix(Int(len))), verifyError: why)
    }

    func read(_ buf: UnsafeMutableRawBufferPointer) -> IOStep {
        guard let ssl else { return .eof }
        var n = 0
        let rc = SSL_read_ex(ssl, buf.baseAddress, buf.count, &n)
        if rc == 1 { return .bytes(n) }
        return step(SSL_get_error(ssl, 0))
    }

    func write(_ buf: UnsafeRawBufferPointer) -> IOStep {
        guard let ssl else { return .eof }
        var n = 0
        let rc = SSL_write_ex(ssl, buf.baseAddress, buf.count, &n)
        if rc == 1 { return .bytes(n) }
        return step(SSL_get_error(ssl, 0))
    }

    private func step(_ err: Int32) -> IOStep {
        switch err {
        case SSL_ERROR_WANT_READ: return .wouldBlock(wantWrite: false)
        case SSL_ERROR_WANT_WRITE: return .wouldBlock(wantWrite: true)
        case SSL_ERROR_ZERO_RETURN: return .eof
        case SSL_ERROR_SYSCALL:
            let q = TLSStream.errorQueue()
            return errno == 0 || q == "connection closed during handshake" ? .eof : .failed("TLS: \(String(cString: strerror(errno)))")
        default: return .failed("TLS: \(TLSStream.errorQueue())")
        }
    }

    var hasBufferedInput: Bool { ssl.map { SSL_pending($0) > 0 } ?? false }

    func close() {
        if let ssl { SSL_shutdown(ssl); SSL_free(ssl) }
        ssl = nil
        if let ctx { SSL_CTX_free(ctx) }
        ctx = nil
        tcp.close()
    }
}
