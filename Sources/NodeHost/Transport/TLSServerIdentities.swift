import COpenSSL
import Glibc
import Kit
import Store
import Support

/// TLS servers for bundles (Kit's TLSServers): an OpenSSL server context per identity, TLS 1.2 or
/// newer, no client certificates (clients prove themselves with the bearer token inside).
package struct TLSServerIdentities: TLSServers {
    package init() {}

    package func identity(certificateFile: String, keyFile: String) throws(TransportError) -> any TLSServerIdentity {
        try OpenSSLServerIdentity(certificateFile: certificateFile, keyFile: keyFile)
    }
}

/// One certificate and key, loaded once; every accepted connection shares the context.
final class OpenSSLServerIdentity: TLSServerIdentity, @unchecked Sendable {
    // Unchecked: the context is only read after init (OpenSSL allows SSL_new on a shared context
    // from several threads), and freed in deinit when no connection can use it any more.
    private let o: OpenSSLLibrary
    private let ctx: OpaquePointer
    let summary: String

    init(certificateFile: String, keyFile: String) throws(TransportError) {
        do { o = try OpenSSLLibrary.shared.get() } catch { throw TransportError("TLS: \(error.description)") }
        // A private key others can read is as good as published.
        var st = stat()
        guard stat(keyFile, &st) == 0 else { throw TransportError("cannot read the TLS key \(keyFile): \(String(cString: strerror(errno)))") }
        guard st.st_mode & 0o077 == 0 else {
            throw TransportError("the TLS key \(keyFile) can be read by other accounts (mode \(String(st.st_mode & 0o777, radix: 8))); chmod 600 \(keyFile)")
        }
        guard let ctx = o.ctxNew(o.tlsServerMethod()) else { throw TransportError("TLS: cannot create a server context") }
        self.ctx = ctx
        o.setMinProtocol(ctx, TLS1_2_VERSION)
        guard o.ctxUseCertificateChainFile(ctx, certificateFile) == 1 else {
            let why = o.errorQueue() ?? "unreadable"
            o.ctxFree(ctx)
            throw TransportError("the TLS certificate \(certificateFile) cannot be used: \(why)")
        }
        guard o.ctxUsePrivateKeyFile(ctx, keyFile, SSL_FILETYPE_PEM) == 1 else {
            let why = o.errorQueue() ?? "unreadable"
            o.ctxFree(ctx)
            // OpenSSL checks the pair as it loads the key ("key values mismatch").
            if why.contains("mismatch") { throw TransportError("the TLS key \(keyFile) does not belong to the certificate \(certificateFile)") }
            throw TransportError("the TLS key \(keyFile) cannot be used: \(why)")
        }
        guard o.ctxCheckPrivateKey(ctx) == 1 else {
            _ = o.errorQueue()
            o.ctxFree(ctx)
            throw TransportError("the TLS key \(keyFile) does not belong to the certificate \(certificateFile)")
        }
        var name = [CChar](repeating: 0, count: 256)
        if let cert = o.ctxGet0Certificate(ctx), let subject = o.x509GetSubjectName(cert), o.x509NameOneline(subject, &name, Int32(name.count)) != nil {
            summary = "certificate \(String(cBuffer: name))"
        } else {
            summary = "certificate \(certificateFile)"
        }
    }

    deinit { o.ctxFree(ctx) }

    func accept(fd: Int32, timeout: Duration) throws(TransportError) -> any ByteStream {
        try TLSStream(accepting: TCPSocket.adopting(fd: fd), context: ctx, library: o, timeout: timeout)
    }
}
