/// Ed25519 key derivation and signing (RFC 8032), in plain Swift, for the device signature in
/// `connect`. Why not OpenSSL any more: a node that talks to a ws:// gateway (loopback, LAN, a
/// tailnet) needs no TLS, and libcrypto was then mapped only to sign one payload per connection —
/// 3.5 MiB of the idle daemon's 27. TLS (wss://) still uses OpenSSL.
///
/// The arithmetic follows TweetNaCl's, which is small enough to check line by line: field
/// elements are 16 signed 64-bit limbs of 16 bits, reduced mod 2^255 - 19; the scalar
/// multiplication is a Montgomery-style ladder whose swaps are masks (`select`), so neither the
/// branches nor the memory accesses depend on the secret scalar. Signing is deterministic (the
/// nonce is a hash of the key and the message), so no randomness is needed here.
public enum Ed25519 {
    /// The public key (32 bytes) of a 32-byte private seed.
    public static func publicKey(seed: [UInt8]) -> [UInt8] {
        precondition(seed.count == 32, "an Ed25519 seed is 32 bytes")
        return pack(scalarBase(clamped(SHA512.hash(seed))))
    }

    /// The signature (64 bytes: R, then S) of `message` with the 32-byte private seed.
    public static func sign(seed: [UInt8], message: [UInt8]) -> [UInt8] {
        precondition(seed.count == 32, "an Ed25519 seed is 32 bytes")
        let h = SHA512.hash(seed)
        let a = clamped(h)
        let publicKey = pack(scalarBase(a))
        let r = reduce(SHA512.hash(h[32..<64] + message))
        let bigR = pack(scalarBase(r))
        let k = reduce(SHA512.hash(bigR + publicKey + message))
        // S = r + k·a mod L
        var x = [Int64](repeating: 0, count: 64)
        for i in 0..<32 { x[i] = Int64(r[i]) }
        for i in 0..<32 { for j in 0..<32 { x[i + j] += Int64(k[i]) * Int64(a[j]) } }
        return bigR + modL(&x)
    }

    // MARK: the scalar

    /// The secret scalar: the hash's first half with RFC 8032's bits cleared and set.
    private static func clamped(_ h: [UInt8]) -> [UInt8] {
        var a = Array(h[0..<32])
        a[0] &= 248
        a[31] &= 127
        a[31] |= 64
        return a
    }

    /// The group order L = 2^252 + 27742317777372353535851937790883648493, little-endian bytes.
    private static let order: [Int64] = [0xed, 0xd3, 0xf5, 0x5c, 0x1a, 0x63, 0x12, 0x58, 0xd6, 0x9c, 0xf7, 0xa2,
                                         0xde, 0xf9, 0xde, 0x14, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x10]

    /// A 64-byte little-endian number mod L.
    private static func reduce(_ bytes: [UInt8]) -> [UInt8] {
        var x = bytes.map { Int64($0) }
        return modL(&x)
    }

    /// `x` (64 limbs of about 8 bits, little-endian) mod L, as 32 bytes.
    private static func modL(_ x: inout [Int64]) -> [UInt8] {
        for i in stride(from: 63, through: 32, by: -1) {
            var carry: Int64 = 0
            var j = i - 32
            while j < i - 12 {
                x[j] += carry - 16 * x[i] * order[j - (i - 32)]
                carry = (x[j] + 128) >> 8
                x[j] -= carry << 8
                j += 1
            }
            x[j] += carry
            x[i] = 0
        }
        var carry: Int64 = 0
        for j in 0..<32 {
            x[j] += carry - (x[31] >> 4) * order[j]
            carry = x[j] >> 8
            x[j] &= 255
        }
        for j in 0..<32 { x[j] -= carry * order[j] }
        var r = [UInt8](repeating: 0, count: 32)
        for i in 0..<32 {
            x[i + 1] += x[i] >> 8
            r[i] = UInt8(truncatingIfNeeded: x[i] & 255)
        }
        return r
    }

    // MARK: points (extended coordinates X, Y, Z, T)

    private typealias Point = (x: Field, y: Field, z: Field, t: Field)

    private static func add(_ p: Point, _ q: Point) -> Point {
        let a = (p.y - p.x) * (q.y - q.x)
        let b = (p.x + p.y) * (q.x + q.y)
        let c = p.t * q.t * Field.d2
        let d = p.z * q.z
        let dd = d + d
        let e = b - a, f = dd - c, g = dd + c, h = b + a
        return (e * f, h * g, g * f, e * h)
    }

    /// Swaps p and q when `bit` is 1, by masks rather than a branch.
    private static func swap(_ p: inout Point, _ q: inout Point, _ bit: Int64) {
        Field.select(&p.x, &q.x, bit); Field.select(&p.y, &q.y, bit)
        Field.select(&p.z, &q.z, bit); Field.select(&p.t, &q.t, bit)
    }

    /// s·B for the base point B, s a 32-byte little-endian scalar.
    private static func scalarBase(_ s: [UInt8]) -> Point {
        var q: Point = (Field.baseX, Field.baseY, Field.one, Field.baseX * Field.baseY)
        var p: Point = (Field.zero, Field.one, Field.one, Field.zero)
        for i in stride(from: 255, through: 0, by: -1) {
            let bit = Int64((s[i / 8] >> UInt8(i & 7)) & 1)
            swap(&p, &q, bit)
            q = add(q, p)
            p = add(p, p)
            swap(&p, &q, bit)
        }
        return p
    }

    /// The point's 32-byte encoding: y, with the sign of x in the top bit.
    private static func pack(_ p: Point) -> [UInt8] {
        let zi = p.z.inverse()
        let x = (p.x * zi).packed(), y = (p.y * zi).packed()
        var r = y
        r[31] ^= (x[0] & 1) << 7
        return r
    }
}

/// An element of GF(2^255 - 19): 16 limbs of 16 bits (limb i weighs 2^(16·i)), kept loosely
/// reduced between operations and fully reduced only when packed.
private struct Field {
    var limbs: [Int64]

    init(_ limbs: [Int64]) { self.limbs = limbs }

    static let zero = Field([Int64](repeating: 0, count: 16))
    static let one = Field([1] + [Int64](repeating: 0, count: 15))
    /// 2·d, d = -121665/121666 (the curve constant).
    static let d2 = Field([0xf159, 0x26b2, 0x9b94, 0xebd6, 0xb156, 0x8283, 0x149a, 0x00e0,
                           0xd130, 0xeef3, 0x80f2, 0x198e, 0xfce7, 0x56df, 0xd9dc, 0x2406])
    /// The base point's coordinates.
    static let baseX = Field([0xd51a, 0x8f25, 0x2d60, 0xc956, 0xa7b2, 0x9525, 0xc760, 0x692c,
                              0xdc5c, 0xfdd6, 0xe231, 0xc0a4, 0x53fe, 0xcd6e, 0x36d3, 0x2169])
    static let baseY = Field([0x6658, 0x6666, 0x6666, 0x6666, 0x6666, 0x6666, 0x6666, 0x6666,
                              0x6666, 0x6666, 0x6666, 0x6666, 0x6666, 0x6666, 0x6666, 0x6666])

    static func + (a: Field, b: Field) -> Field {
        var o = a
        for i in 0..<16 { o.limbs[i] += b.limbs[i] }
        return o
    }

    static func - (a: Field, b: Field) -> Field {
        var o = a
        for i in 0..<16 { o.limbs[i] -= b.limbs[i] }
        return o
    }

    static func * (a: Field, b: Field) -> Field {
        var t = [Int64](repeating: 0, count: 31)
        for i in 0..<16 { for j in 0..<16 { t[i + j] += a.limbs[i] * b.limbs[j] } }
        // 2^256 ≡ 38 (mod p): fold the upper half down.
        for i in 0..<15 { t[i] += 38 * t[i + 16] }
        var o = Field(Array(t[0..<16]))
        o.carry(); o.carry()
        return o
    }

    /// Moves each limb's bits above 16 into the next one (the top limb's, times 38, into the first).
    mutating func carry() {
        for i in 0..<16 {
            limbs[i] += 1 << 16
            let c = limbs[i] >> 16
            if i < 15 { limbs[i + 1] += c - 1 } else { limbs[0] += 38 * (c - 1) }
            limbs[i] -= c << 16
        }
    }

    /// Swaps a and b when `bit` is 1, 0 leaves them: a mask, no branch on the (secret) bit.
    static func select(_ a: inout Field, _ b: inout Field, _ bit: Int64) {
        let mask = ~(bit - 1)
        for i in 0..<16 {
            let t = mask & (a.limbs[i] ^ b.limbs[i])
            a.limbs[i] ^= t
            b.limbs[i] ^= t
        }
    }

    /// a^(p-2) = 1/a, by square-and-multiply over the fixed exponent (no secret-dependent branch).
    func inverse() -> Field {
        var c = self
        for a in stride(from: 253, through: 0, by: -1) {
            c = c * c
            if a != 2 && a != 4 { c = c * self }
        }
        return c
    }

    /// The canonical 32-byte little-endian encoding (fully reduced mod p).
    func packed() -> [UInt8] {
        var t = self
        t.carry(); t.carry(); t.carry()
        for _ in 0..<2 {
            var m = Field.zero
            m.limbs[0] = t.limbs[0] - 0xffed
            for i in 1..<15 {
                m.limbs[i] = t.limbs[i] - 0xffff - ((m.limbs[i - 1] >> 16) & 1)
                m.limbs[i - 1] &= 0xffff
            }
            m.limbs[15] = t.limbs[15] - 0x7fff - ((m.limbs[14] >> 16) & 1)
            let borrow = (m.limbs[15] >> 16) & 1
            m.limbs[14] &= 0xffff
            Field.select(&t, &m, 1 - borrow)
        }
        var o = [UInt8](repeating: 0, count: 32)
        for i in 0..<16 {
            o[2 * i] = UInt8(truncatingIfNeeded: t.limbs[i] & 0xff)
            o[2 * i + 1] = UInt8(truncatingIfNeeded: t.limbs[i] >> 8)
        }
        return o
    }
}
