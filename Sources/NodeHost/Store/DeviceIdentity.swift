import Config
import Kit
import Support

/// The node's Ed25519 device key. Created once, kept forever: a new key is a new device id and
/// means a new pairing request on every gateway.
public struct DeviceIdentity: Sendable {
    /// The 32-byte private seed (never logged).
    let seed: [UInt8]
    public let publicKey: [UInt8]
    public let createdAtMs: Int64

    init(seed: [UInt8], publicKey: [UInt8], createdAtMs: Int64) {
        self.seed = seed
        self.publicKey = publicKey
        self.createdAtMs = createdAtMs
    }

    /// The key of `seed`, its public half derived from it.
    init(seed: [UInt8], createdAtMs: Int64) throws(Crypto.Failure) {
        self.init(seed: seed, publicKey: try Crypto.ed25519PublicKey(seed: seed), createdAtMs: createdAtMs)
    }

    /// A new key from a random seed.
    static func generate(nowMs: Int64) throws(Crypto.Failure) -> DeviceIdentity {
        try DeviceIdentity(seed: Crypto.randomBytes(32), createdAtMs: nowMs)
    }

    /// Lower-case hex SHA-256 of the raw public key (docs/PROTOCOL.md §2.4).
    public var deviceId: String { Encoding.hex(Crypto.sha256(publicKey)) }

    /// Raw public key, base64url without padding (43 characters).
    public var publicKeyBase64url: String { Encoding.base64url(publicKey) }

    /// Signs a device-auth payload string; returns base64url (86 characters).
    public func sign(_ payload: String) throws(Crypto.Failure) -> String {
        Encoding.base64url(try Crypto.ed25519Sign(seed: seed, message: Array(payload.utf8)))
    }
}
