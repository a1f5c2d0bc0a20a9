/// How text becomes `node.invoke.progress` chunks: at most 16 KiB of UTF-8 each (the gateway
/// counts bytes, not characters), never cut inside a code point, in order.
public enum ProgressText {
    /// The gateway's limit on one chunk, in UTF-8 bytes.
    public static let maxChunkBytes = 16 * 1024

    /// `text` in chunks of at most `limit` UTF-8 bytes, each ending on a code point boundary
    /// (a scalar is at most 4 bytes, so every chunk but the last is at least `limit - 3`).
    /// Empty text has no chunks (an empty chunk is a heartbeat, not text).
    public static func chunks(_ text: String, limit: Int = maxChunkBytes) -> [String] {
        precondition(limit >= 4, "a chunk must hold any code point")
        var out: [String] = []
        var current = String.UnicodeScalarView()
        var bytes = 0
        for scalar in text.unicodeScalars {
            let n = UTF8.width(scalar)
            if bytes + n > limit {
                out.append(String(current))
                current = String.UnicodeScalarView()
                bytes = 0
            }
            current.append(scalar)
            bytes += n
        }
        if bytes > 0 { out.append(String(current)) }
        return out
    }

    /// How many leading bytes of `bytes` are whole UTF-8 sequences: all of them but a trailing
    /// sequence that is not complete yet (whose rest a later read brings). Invalid bytes count as
    /// whole (they become U+FFFD when decoded).
    public static func completeLength(_ bytes: some RandomAccessCollection<UInt8>) -> Int {
        let count = bytes.count
        var back = 1
        while back <= min(3, count) {
            let b = bytes[bytes.index(bytes.startIndex, offsetBy: count - back)]
            if b & 0xC0 != 0x80 {
                let need = b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : b >= 0xC0 ? 2 : 1
                return back < need ? count - back : count
            }
            back += 1
        }
        return count
    }
}
