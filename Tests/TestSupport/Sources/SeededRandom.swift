/// The fuzz tests' random source: SplitMix64, small, fast and the same sequence on every machine,
/// so a failure names its seed and iteration and replays. `mutate` makes the near-valid inputs that
/// reach deep into a parser (flipped bits, inserted and deleted runs, cuts, hostile punctuation).
struct SeededRandom {
    var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    mutating func below(_ n: Int) -> Int { Int(next() % UInt64(max(1, n))) }
    mutating func bytes(_ n: Int) -> [UInt8] { (0..<n).map { _ in UInt8(truncatingIfNeeded: next()) } }

    /// A copy of `base` with a few random edits. `punctuation` is what gets inserted besides random
    /// bytes: the characters (and numbers) the parser under test gives meaning to.
    mutating func mutate(_ base: [UInt8], punctuation: [UInt8] = Array("{[\"\\:,}]0-1e999\u{0}".utf8)) -> [UInt8] {
        var b = base
        for _ in 0..<(1 + below(4)) {
            switch below(5) {
            case 0 where !b.isEmpty: b[below(b.count)] ^= UInt8(1 << below(8))
            case 1: b.insert(contentsOf: bytes(1 + below(16)), at: below(b.count + 1))
            case 2 where !b.isEmpty: let i = below(b.count); b.removeSubrange(i..<min(b.count, i + 1 + below(16)))
            case 3 where !b.isEmpty: b = Array(b.prefix(below(b.count)))
            default: b.insert(contentsOf: shuffledPrefix(punctuation), at: below(b.count + 1))
            }
        }
        return b
    }

    /// The first few elements of `a` in a random order.
    mutating func shuffledPrefix<T>(_ a: [T]) -> [T] {
        var a = a
        for i in stride(from: a.count - 1, to: 0, by: -1) { a.swapAt(i, below(i + 1)) }
        return Array(a.prefix(1 + below(a.count)))
    }
}
