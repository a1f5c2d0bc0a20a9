/// RFB's "VNC authentication" (security type 2, RFC 6143 §7.2.2): the server sends 16 random
/// bytes, the client answers them DES-encrypted with the password as key. The node plays the
/// server side toward the gateway when its own VNC server cannot ask for a password (wayvnc on a
/// private socket), so what the gateway reaches is still authenticated.
enum VNCAuthentication {
    /// RFB passwords are at most 8 bytes (the DES key); longer ones are cut, as every VNC server does.
    static let maxPasswordBytes = 8

    /// The answer to `challenge` (16 bytes) under `password`.
    static func response(challenge: [UInt8], password: String) -> [UInt8] {
        let key = desKey(password)
        return DESCipher.encrypt(block: Array(challenge[0..<8]), key: key) + DESCipher.encrypt(block: Array(challenge[8..<16]), key: key)
    }

    /// Whether `answer` is the right response, compared without an early exit.
    static func verify(challenge: [UInt8], answer: [UInt8], password: String) -> Bool {
        guard answer.count == 16 else { return false }
        return zip(response(challenge: challenge, password: password), answer).reduce(0) { $0 | ($1.0 ^ $1.1) } == 0
    }

    /// The password's bytes, zero-padded to 8, each bit-reversed: the RFB convention (the original
    /// implementation fed DES its key bytes in the opposite bit order).
    static func desKey(_ password: String) -> [UInt8] {
        var k = Array(password.utf8.prefix(maxPasswordBytes))
        k += [UInt8](repeating: 0, count: maxPasswordBytes - k.count)
        return k.map { b in (0..<8).reduce(UInt8(0)) { $0 | ((b >> $1) & 1) << (7 - $1) } }
    }
}
