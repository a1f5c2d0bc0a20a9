/// Writes an H.264 RBSP bit by bit, most significant bit first, with the Exp-Golomb codes of the
/// standard's syntax tables; `finish()` adds the stop bit and the alignment zeros.
struct BitstreamWriter {
    private(set) var bytes: [UInt8] = []
    private var current: UInt8 = 0
    private var used = 0

    mutating func bit(_ b: UInt32) {
        current |= UInt8(b & 1) << (7 - UInt8(used))
        used += 1
        if used == 8 { bytes.append(current); current = 0; used = 0 }
    }

    /// u(n), n ≤ 32.
    mutating func bits(_ value: UInt32, _ n: Int) {
        for i in stride(from: n - 1, through: 0, by: -1) { bit(value >> UInt32(i)) }
    }

    mutating func flag(_ b: Bool) { bit(b ? 1 : 0) }

    /// ue(v).
    mutating func ue(_ value: UInt32) {
        let coded = UInt64(value) + 1
        let length = 64 - coded.leadingZeroBitCount
        bits(0, length - 1)
        for i in stride(from: length - 1, through: 0, by: -1) { bit(UInt32(coded >> UInt64(i) & 1)) }
    }

    /// se(v).
    mutating func se(_ value: Int32) {
        ue(value > 0 ? UInt32(value) * 2 - 1 : UInt32(-value) * 2)
    }

    /// rbsp_trailing_bits: a one, then zeros to the byte boundary.
    mutating func finish() -> [UInt8] {
        bit(1)
        while used != 0 { bit(0) }
        return bytes
    }
}
