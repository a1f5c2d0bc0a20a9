import COpenSSL
import Config
import FoundationEssentials
import Glibc
import Kit
import Support

/// OpenSSL-backed primitives: Ed25519, SHA-256, random bytes. Raw pointers stay in here.
public enum Crypto {
    public struct Failure: Error, Sendable, CustomStringConvertible {
        public let what: String
        public var description: String { "crypto: \(what)" }
    }

    public static func randomBytes(_ n: Int) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: n)
        // RAND_bytes only fails when the OS entropy source is broken; nothing sensible can continue then.
        precondition(RAND_bytes(&out, Int32(n)) == 1, "RAND_bytes failed: no entropy source")
        return out
    }

    /// One SHA-256 for the whole node (Support's, which bundles use too).
    public static func sha256(_ data: some Collection<UInt8>) -> [UInt8] { SHA256.hash(data) }

    public static func sha1(_ data: some Collection<UInt8>) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 20)
        var len: UInt32 = 0
        let bytes = Array(data)
        _ = bytes.withUnsafeBytes { EVP_Digest($0.baseAddress, bytes.count, &out, &len, EVP_sha1(), nil) }
        return out
    }

    /// Ed25519 public key (32 bytes) of a 32-byte private seed.
    public static func ed25519PublicKey(seed: [UInt8]) throws(Failure) -> [UInt8] {
        guard seed.count == 32, let pkey = EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, nil, seed, 32) else {
            throw Failure(what: "invalid Ed25519 seed")
        }
        defer { EVP_PKEY_free(pkey) }
        var pub = [UInt8](repeating: 0, count: 32)
        var len = 32
        guard EVP_PKEY_get_raw_public_key(pkey, &pub, &len) == 1, len == 32 else { throw Failure(what: "cannot derive public key") }
        return pub
    }

    /// Ed25519 signature (64 bytes) of `message` with the 32-byte private seed.
    public static func ed25519Sign(seed: [UInt8], message: [UInt8]) throws(Failure) -> [UInt8] {
        guard seed.count == 32, let pkey = EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, nil, seed, 32) else {
            throw Failure(what: "invalid Ed25519 seed")
        }
        defer { EVP_PKEY_free(pkey) }
        guard let ctx = EVP_MD_CTX_new() else { throw Failure(what: "EVP_MD_CTX_new") }
        defer { EVP_MD_CTX_free(ctx) }
        guard EVP_DigestSignInit(ctx, nil, nil, nil, pkey) == 1 else { throw Failure(what: "sign init") }
        var sig = [UInt8](repeating: 0, count: 64)
        var sigLen = 64
        guard EVP_DigestSign(ctx, &sig, &sigLen, message, message.count) == 1, sigLen == 64 else {
            throw Failure(what: "sign")
        }
        return sig
    }

    public static func ed25519Verify(publicKey: [UInt8], message: [UInt8], signature: [UInt8]) -> Bool {
        guard publicKey.count == 32, signature.count == 64,
              let pkey = EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nil, publicKey, 32) else { return false }
        defer { EVP_PKEY_free(pkey) }
        guard let ctx = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(ctx) }
        guard EVP_DigestVerifyInit(ctx, nil, nil, nil, pkey) == 1 else { return false }
        return EVP_DigestVerify(ctx, signature, signature.count, message, message.count) == 1
    }
}

public enum Encoding {
    public static func hex(_ bytes: some Sequence<UInt8>) -> String {
        bytes.map { $0.hex() }.joined()
    }

    /// base64url without padding (RFC 4648 §5), as the gateway expects for keys and signatures.
    public static func base64url(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString()
            .replacing("+", with: "-")
            .replacing("/", with: "_")
            .replacing("=", with: "")
    }

    /// Accepts base64url or standard base64, padded or not.
    public static func fromBase64url(_ s: String) -> [UInt8]? {
        var t = s.replacing("-", with: "+").replacing("_", with: "/")
        while t.count % 4 != 0 { t += "=" }
        return Data(base64Encoded: t).map { Array($0) }
    }
}
