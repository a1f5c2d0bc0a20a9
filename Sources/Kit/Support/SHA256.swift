/// SHA-256 (FIPS 180-4) in plain Swift, for hashing that bundles need without linking OpenSSL
/// (exec-approval document hashes, argv-bound allowlist entries) and for the device id. Hashes
/// public data only, so constant time does not matter here; signatures stay with OpenSSL.
public enum SHA256 {
    public static func hash(_ data: some Collection<UInt8>) -> [UInt8] {
        if let digest = data.withContiguousStorageIfAvailable({ hash(bytes: UnsafeRawBufferPointer($0)) }) { return digest }
        return Array(data).withUnsafeBytes { hash(bytes: $0) }
    }

    /// Whole blocks are read where they lie (a 16 MiB file is not copied to be padded); only the
    /// last one or two are built with the padding.
    static func hash(bytes: UnsafeRawBufferPointer) -> [UInt8] {
        var h: [UInt32] = [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19]
        let whole = bytes.count / 64
        var tail = Array(bytes[(whole * 64)...])
        let bitLength = UInt64(bytes.count) * 8
        tail.append(0x80)
        while tail.count % 64 != 56 { tail.append(0) }
        for i in (0..<8).reversed() { tail.append(UInt8(truncatingIfNeeded: bitLength >> (UInt64(i) * 8))) }
        h.withUnsafeMutableBufferPointer { state in
            withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 64) { w in
                k.withUnsafeBufferPointer { k in
                    if let base = bytes.baseAddress {
                        for block in 0..<whole { compress(base + block * 64, state, w, k) }
                    }
                    tail.withUnsafeBytes { t in
                        for block in 0..<(t.count / 64) { compress(t.baseAddress! + block * 64, state, w, k) }
                    }
                }
            }
        }
        return h.flatMap { v in (0..<4).map { UInt8(truncatingIfNeeded: v >> (24 - UInt32($0) * 8)) } }
    }

    /// One 64-byte block into the state (FIPS 180-4 §6.2.2).
    private static func compress(_ block: UnsafeRawPointer, _ h: UnsafeMutableBufferPointer<UInt32>,
                                 _ w: UnsafeMutableBufferPointer<UInt32>, _ k: UnsafeBufferPointer<UInt32>) {
        for i in 0..<16 { w[i] = UInt32(bigEndian: block.loadUnaligned(fromByteOffset: i * 4, as: UInt32.self)) }
        for i in 16..<64 {
            let s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3)
            let s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10)
            w[i] = w[i - 16] &+ s0 &+ w[i - 7] &+ s1
        }
        var (a, b, c, d, e, f, g, hh) = (h[0], h[1], h[2], h[3], h[4], h[5], h[6], h[7])
        for i in 0..<64 {
            let s1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)
            let ch = (e & f) ^ (~e & g)
            let t1 = hh &+ s1 &+ ch &+ k[i] &+ w[i]
            let s0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)
            let maj = (a & b) ^ (a & c) ^ (b & c)
            let t2 = s0 &+ maj
            (hh, g, f, e, d, c, b, a) = (g, f, e, d &+ t1, c, b, a, t1 &+ t2)
        }
        h[0] = h[0] &+ a; h[1] = h[1] &+ b; h[2] = h[2] &+ c; h[3] = h[3] &+ d
        h[4] = h[4] &+ e; h[5] = h[5] &+ f; h[6] = h[6] &+ g; h[7] = h[7] &+ hh
    }

    /// The message with FIPS 180-4's padding: a 1 bit, zeros, and the length in bits as a big-endian
    /// number filling the last eighth of a block — 64-byte blocks for SHA-1 and SHA-256, 128-byte
    /// ones (a 128-bit length, its upper half zero for any message held in memory) for SHA-512.
    static func padded(_ data: some Collection<UInt8>, blockSize: Int = 64) -> [UInt8] {
        var message = Array(data)
        let bitLength = UInt64(message.count) * 8
        let lengthBytes = blockSize / 8
        message.append(0x80)
        while message.count % blockSize != blockSize - lengthBytes { message.append(0) }
        message.append(contentsOf: repeatElement(0, count: lengthBytes - 8))
        for i in (0..<8).reversed() { message.append(UInt8(truncatingIfNeeded: bitLength >> (UInt64(i) * 8))) }
        return message
    }

    /// Lowercase hex of the hash of `text`'s UTF-8 bytes.
    public static func hex(_ text: String) -> String { hash(Array(text.utf8)).map { $0.hex() }.joined() }

    private static func rotr(_ x: UInt32, _ n: UInt32) -> UInt32 { (x >> n) | (x << (32 - n)) }

    private static let k: [UInt32] = [
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
        0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
        0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
        0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
        0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
        0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
        0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
    ]
}
