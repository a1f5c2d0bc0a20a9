import COpenSSL
import Config
import Glibc
import Kit
import Support

/// The node's primitives: Ed25519, SHA-256 and SHA-1 in Support (signing maps no libcrypto),
/// verification with OpenSSL (bound on first use, OpenSSLLibrary), random bytes from the kernel.
/// Raw pointers stay in here.
public enum Crypto {
    public struct Failure: Error, Sendable, CustomStringConvertible {
        public let what: String
        public var description: String { "crypto: \(what)" }
    }

    public static func randomBytes(_ n: Int) -> [UInt8] { SecureRandom.bytes(n) }

    /// One SHA-256 for the whole node (Support's, which bundles use too).
    public static func sha256(_ data: some Collection<UInt8>) -> [UInt8] { SHA256.hash(data) }

    public static func sha1(_ data: some Collection<UInt8>) -> [UInt8] { SHA1.hash(data) }

    private static func openssl() throws(Failure) -> OpenSSLLibrary {
        do { return try OpenSSLLibrary.shared.get() } catch { throw Failure(what: error.description) }
    }

    /// Ed25519 public key (32 bytes) of a 32-byte private seed (Support's Ed25519: no libcrypto).
    public static func ed25519PublicKey(seed: [UInt8]) throws(Failure) -> [UInt8] {
        guard seed.count == 32 else { throw Failure(what: "invalid Ed25519 seed") }
        return Ed25519.publicKey(seed: seed)
    }

    /// Ed25519 signature (64 bytes) of `message` with the 32-byte private seed.
    public static func ed25519Sign(seed: [UInt8], message: [UInt8]) throws(Failure) -> [UInt8] {
        guard seed.count == 32 else { throw Failure(what: "invalid Ed25519 seed") }
        return Ed25519.sign(seed: seed, message: message)
    }

    /// Checks a signature with OpenSSL — an implementation independent of the signing code above,
    /// which is what the tests want from it; the daemon itself never verifies.
    public static func ed25519Verify(publicKey: [UInt8], message: [UInt8], signature: [UInt8]) -> Bool {
        guard let o = try? openssl(), publicKey.count == 32, signature.count == 64,
              let pkey = o.pkeyNewRawPublicKey(EVP_PKEY_ED25519, nil, publicKey, 32) else { return false }
        defer { o.pkeyFree(pkey) }
        guard let ctx = o.mdCtxNew() else { return false }
        defer { o.mdCtxFree(ctx) }
        guard o.digestVerifyInit(ctx, nil, nil, nil, pkey) == 1 else { return false }
        return o.digestVerify(ctx, signature, signature.count, message, message.count) == 1
    }
}

public enum Encoding {
    public static func hex(_ bytes: some Sequence<UInt8>) -> String {
        bytes.map { $0.hex() }.joined()
    }

    /// base64url without padding (RFC 4648 §5), as the gateway expects for keys and signatures.
    public static func base64url(_ bytes: [UInt8]) -> String {
        Base64.encodeURLSafe(bytes)
    }

    /// Accepts base64url or standard base64, padded or not.
    public static func fromBase64url(_ s: String) -> [UInt8]? {
        Base64.decode(s)
    }
}
