import COpenSSL
import Support

/// The part of OpenSSL the node uses — Ed25519 keys and signatures (libcrypto) and TLS client
/// sessions, client and server (libssl) — bound with dlopen on first use: `status`, `caps`, `--help` and a node that
/// has not connected yet never map the two libraries (libcrypto alone is about 1.5 MiB resident once
/// relocated, more once used). Each member has the exact C type of the function of the same name;
/// libcrypto's are found through libssl, which links it.
public struct OpenSSLLibrary: Sendable {
    public typealias Pointer = OpaquePointer

    // libcrypto: Ed25519
    let pkeyNewRawPrivateKey: @convention(c) (Int32, Pointer?, UnsafePointer<UInt8>?, Int) -> Pointer?
    let pkeyNewRawPublicKey: @convention(c) (Int32, Pointer?, UnsafePointer<UInt8>?, Int) -> Pointer?
    let pkeyGetRawPublicKey: @convention(c) (Pointer?, UnsafeMutablePointer<UInt8>?, UnsafeMutablePointer<Int>?) -> Int32
    let pkeyFree: @convention(c) (Pointer?) -> Void
    let mdCtxNew: @convention(c) () -> Pointer?
    let mdCtxFree: @convention(c) (Pointer?) -> Void
    let digestSignInit: @convention(c) (Pointer?, UnsafeMutablePointer<Pointer?>?, Pointer?, Pointer?, Pointer?) -> Int32
    let digestSign: @convention(c) (Pointer?, UnsafeMutablePointer<UInt8>?, UnsafeMutablePointer<Int>?, UnsafePointer<UInt8>?, Int) -> Int32
    let digestVerifyInit: @convention(c) (Pointer?, UnsafeMutablePointer<Pointer?>?, Pointer?, Pointer?, Pointer?) -> Int32
    let digestVerify: @convention(c) (Pointer?, UnsafePointer<UInt8>?, Int, UnsafePointer<UInt8>?, Int) -> Int32
    // libcrypto: certificates and errors
    public let sha256: @convention(c) () -> Pointer?
    public let x509Digest: @convention(c) (Pointer?, Pointer?, UnsafeMutablePointer<UInt8>?, UnsafeMutablePointer<UInt32>?) -> Int32
    public let x509Free: @convention(c) (Pointer?) -> Void
    public let verifyCertErrorString: @convention(c) (Int) -> UnsafePointer<CChar>?
    public let errGetError: @convention(c) () -> UInt
    public let errErrorStringN: @convention(c) (UInt, UnsafeMutablePointer<CChar>?, Int) -> Void
    // libssl
    public let tlsClientMethod: @convention(c) () -> Pointer?
    public let ctxNew: @convention(c) (Pointer?) -> Pointer?
    public let ctxFree: @convention(c) (Pointer?) -> Void
    public let ctxLoadVerifyLocations: @convention(c) (Pointer?, UnsafePointer<CChar>?, UnsafePointer<CChar>?) -> Int32
    public let ctxSetDefaultVerifyPaths: @convention(c) (Pointer?) -> Int32
    public let ctxSetVerify: @convention(c) (Pointer?, Int32, SSL_verify_cb?) -> Void
    public let sslNew: @convention(c) (Pointer?) -> Pointer?
    public let sslFree: @convention(c) (Pointer?) -> Void
    public let sslSetFd: @convention(c) (Pointer?, Int32) -> Int32
    public let sslSet1Host: @convention(c) (Pointer?, UnsafePointer<CChar>?) -> Int32
    public let sslConnect: @convention(c) (Pointer?) -> Int32
    public let sslGetError: @convention(c) (Pointer?, Int32) -> Int32
    public let sslGet1PeerCertificate: @convention(c) (Pointer?) -> Pointer?
    public let sslGetVerifyResult: @convention(c) (Pointer?) -> Int
    public let sslReadEx: @convention(c) (Pointer?, UnsafeMutableRawPointer?, Int, UnsafeMutablePointer<Int>?) -> Int32
    public let sslWriteEx: @convention(c) (Pointer?, UnsafeRawPointer?, Int, UnsafeMutablePointer<Int>?) -> Int32
    public let sslPending: @convention(c) (Pointer?) -> Int32
    public let sslShutdown: @convention(c) (Pointer?) -> Int32
    // libssl: the server side (mcp serve on a LAN address)
    public let tlsServerMethod: @convention(c) () -> Pointer?
    public let ctxUseCertificateChainFile: @convention(c) (Pointer?, UnsafePointer<CChar>?) -> Int32
    public let ctxUsePrivateKeyFile: @convention(c) (Pointer?, UnsafePointer<CChar>?, Int32) -> Int32
    public let ctxCheckPrivateKey: @convention(c) (Pointer?) -> Int32
    public let ctxGet0Certificate: @convention(c) (Pointer?) -> Pointer?
    public let sslAccept: @convention(c) (Pointer?) -> Int32
    public let x509GetSubjectName: @convention(c) (Pointer?) -> Pointer?
    public let x509NameOneline: @convention(c) (Pointer?, UnsafeMutablePointer<CChar>?, Int32) -> UnsafeMutablePointer<CChar>?
    // The ctrl entry points behind two macros (their addresses, as integers, for the shim).
    let ctxCtrl: UInt
    let ctrl: UInt

    /// Loaded once per process; the failure (no libssl) is kept and reported each time.
    public static let shared: Result<OpenSSLLibrary, DynamicLibrary.Failure> = Result { () throws(DynamicLibrary.Failure) in
        try OpenSSLLibrary(DynamicLibrary("libssl.so.3", package: "libssl3"))
    }

    private init(_ lib: DynamicLibrary) throws(DynamicLibrary.Failure) {
        pkeyNewRawPrivateKey = try lib.function("EVP_PKEY_new_raw_private_key")
        pkeyNewRawPublicKey = try lib.function("EVP_PKEY_new_raw_public_key")
        pkeyGetRawPublicKey = try lib.function("EVP_PKEY_get_raw_public_key")
        pkeyFree = try lib.function("EVP_PKEY_free")
        mdCtxNew = try lib.function("EVP_MD_CTX_new")
        mdCtxFree = try lib.function("EVP_MD_CTX_free")
        digestSignInit = try lib.function("EVP_DigestSignInit")
        digestSign = try lib.function("EVP_DigestSign")
        digestVerifyInit = try lib.function("EVP_DigestVerifyInit")
        digestVerify = try lib.function("EVP_DigestVerify")
        sha256 = try lib.function("EVP_sha256")
        x509Digest = try lib.function("X509_digest")
        x509Free = try lib.function("X509_free")
        verifyCertErrorString = try lib.function("X509_verify_cert_error_string")
        errGetError = try lib.function("ERR_get_error")
        errErrorStringN = try lib.function("ERR_error_string_n")
        tlsClientMethod = try lib.function("TLS_client_method")
        ctxNew = try lib.function("SSL_CTX_new")
        ctxFree = try lib.function("SSL_CTX_free")
        ctxLoadVerifyLocations = try lib.function("SSL_CTX_load_verify_locations")
        ctxSetDefaultVerifyPaths = try lib.function("SSL_CTX_set_default_verify_paths")
        ctxSetVerify = try lib.function("SSL_CTX_set_verify")
        sslNew = try lib.function("SSL_new")
        sslFree = try lib.function("SSL_free")
        sslSetFd = try lib.function("SSL_set_fd")
        sslSet1Host = try lib.function("SSL_set1_host")
        sslConnect = try lib.function("SSL_connect")
        sslGetError = try lib.function("SSL_get_error")
        sslGet1PeerCertificate = try lib.function("SSL_get1_peer_certificate")
        sslGetVerifyResult = try lib.function("SSL_get_verify_result")
        sslReadEx = try lib.function("SSL_read_ex")
        sslWriteEx = try lib.function("SSL_write_ex")
        sslPending = try lib.function("SSL_pending")
        sslShutdown = try lib.function("SSL_shutdown")
        tlsServerMethod = try lib.function("TLS_server_method")
        ctxUseCertificateChainFile = try lib.function("SSL_CTX_use_certificate_chain_file")
        ctxUsePrivateKeyFile = try lib.function("SSL_CTX_use_PrivateKey_file")
        ctxCheckPrivateKey = try lib.function("SSL_CTX_check_private_key")
        ctxGet0Certificate = try lib.function("SSL_CTX_get0_certificate")
        sslAccept = try lib.function("SSL_accept")
        x509GetSubjectName = try lib.function("X509_get_subject_name")
        x509NameOneline = try lib.function("X509_NAME_oneline")
        ctxCtrl = UInt(bitPattern: try lib.address("SSL_CTX_ctrl"))
        ctrl = UInt(bitPattern: try lib.address("SSL_ctrl"))
    }

    /// `SSL_CTX_set_min_proto_version` (a macro over SSL_CTX_ctrl).
    public func setMinProtocol(_ ctx: Pointer?, _ version: Int32) {
        _ = copenssl_set_min_proto(UnsafeMutableRawPointer(bitPattern: ctxCtrl), ctx, version)
    }

    /// `SSL_set_tlsext_host_name` (a macro over SSL_ctrl): SNI.
    public func setServerName(_ ssl: Pointer?, _ name: String) {
        _ = copenssl_set_sni(UnsafeMutableRawPointer(bitPattern: ctrl), ssl, name)
    }

    /// OpenSSL's error queue as one line (and emptied).
    public func errorQueue() -> String? {
        var parts: [String] = []
        while case let e = errGetError(), e != 0 {
            var buf = [CChar](repeating: 0, count: 256)
            errErrorStringN(e, &buf, buf.count)
            parts.append(String(cBuffer: buf))
        }
        return parts.isEmpty ? nil : parts.joined(separator: "; ")
    }
}
