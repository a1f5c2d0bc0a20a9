/// Reads the bits of an H.264 RBSP (emulation prevention already removed), most significant bit
/// first, with the Exp-Golomb codes of the standard's syntax tables (ue(v), se(v)).
struct BitstreamReader {
    private let bytes: [UInt8]
    /// The next bit to read, counted from the start.
    private(set) var position = 0

    init(_ bytes: [UInt8], startingAtByte start: Int = 0) {
        self.bytes = bytes
        position = start * 8
    }

    struct Overrun: Error {}

    mutating func skip(to bit: Int) { position = bit }

    mutating func bit() throws(Overrun) -> UInt32 {
        guard position < bytes.count * 8 else { throw Overrun() }
        defer { position += 1 }
        return UInt32(bytes[position >> 3] >> (7 - UInt8(position & 7)) & 1)
    }

    /// u(n), n ≤ 32.
    mutating func bits(_ n: Int) throws(Overrun) -> UInt32 {
        var v: UInt32 = 0
        for _ in 0..<n { v = v << 1 | (try bit()) }
        return v
    }

    mutating func flag() throws(Overrun) -> Bool { try bit() == 1 }

    /// ue(v): leading zeros, a one, then as many bits.
    mutating func ue() throws(Overrun) -> UInt32 {
        var zeros = 0
        while try bit() == 0 {
            zeros += 1
            guard zeros < 32 else { throw Overrun() }
        }
        return (1 << zeros) - 1 + (try bits(zeros))
    }

    /// se(v): ue(v) mapped to 0, 1, −1, 2, −2, …
    mutating func se() throws(Overrun) -> Int32 {
        let k = try ue()
        return k & 1 == 1 ? Int32((k + 1) / 2) : -Int32(k / 2)
    }
}
