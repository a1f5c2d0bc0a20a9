/// Base64 (RFC 4648 §4, with padding) for media payloads and the WebSocket handshake, and its
/// URL-safe alphabet without padding (§5) for keys and signatures.
public enum Base64 {
    private static let standard = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    private static let urlSafe = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    public static func encode(_ bytes: some Collection<UInt8>) -> String { encode(bytes, alphabet: standard, pad: true) }
    public static func encodeURLSafe(_ bytes: some Collection<UInt8>) -> String { encode(bytes, alphabet: urlSafe, pad: false) }

    private static func encode(_ bytes: some Collection<UInt8>, alphabet: [UInt8], pad: Bool) -> String {
        let input = Array(bytes)
        let full = input.count / 3, rest = input.count % 3
        let length = full * 4 + (rest == 0 ? 0 : pad ? 4 : rest + 1)
        // One pass into the final buffer: a 16 MiB file's base64 is built in one allocation.
        let out = [UInt8](unsafeUninitializedCapacity: length) { buf, initialized in
            input.withUnsafeBufferPointer { src in
                alphabet.withUnsafeBufferPointer { a in
                    var i = 0, o = 0
                    for _ in 0..<full {
                        let v = UInt32(src[i]) << 16 | UInt32(src[i + 1]) << 8 | UInt32(src[i + 2])
                        buf[o] = a[Int(v >> 18 & 63)]; buf[o + 1] = a[Int(v >> 12 & 63)]
                        buf[o + 2] = a[Int(v >> 6 & 63)]; buf[o + 3] = a[Int(v & 63)]
                        i += 3; o += 4
                    }
                    if rest > 0 {
                        let v = UInt32(src[i]) << 16 | (rest == 2 ? UInt32(src[i + 1]) << 8 : 0)
                        buf[o] = a[Int(v >> 18 & 63)]; buf[o + 1] = a[Int(v >> 12 & 63)]
                        o += 2
                        if rest == 2 { buf[o] = a[Int(v >> 6 & 63)]; o += 1 }
                        if pad { while o < length { buf[o] = UInt8(ascii: "="); o += 1 } }
                    }
                }
            }
            initialized = length
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Each byte's value in either alphabet; 0xFF for anything else (padding included).
    private static let values: [UInt8] = {
        var t = [UInt8](repeating: 0xFF, count: 256)
        for (i, c) in standard.enumerated() { t[Int(c)] = UInt8(i) }
        t[Int(UInt8(ascii: "-"))] = 62
        t[Int(UInt8(ascii: "_"))] = 63
        return t
    }()

    /// Decodes either alphabet, padded or not; nil on any other character or a bad length.
    public static func decode(_ text: String) -> [UInt8]? {
        var text = text
        return text.withUTF8 { decode(utf8: $0) }
    }

    /// `decode` on UTF-8 bytes. `canonical`: also nil when the unused low bits of the last
    /// character are not zero (the text is not what encoding its bytes gives).
    public static func decode(utf8 input: UnsafeBufferPointer<UInt8>, canonical: Bool = false) -> [UInt8]? {
        var count = input.count, padding = 0
        while count > 0, input[count - 1] == UInt8(ascii: "=") { count -= 1; padding += 1 }
        // An "=" before the trailing ones is data after padding: the table refuses it below.
        guard count % 4 != 1, padding <= 2, padding == 0 || (count + padding) % 4 == 0 else { return nil }
        let full = count / 4, rest = count % 4
        let length = full * 3 + (rest == 0 ? 0 : rest - 1)
        var ok = true
        let out = [UInt8](unsafeUninitializedCapacity: length) { buf, initialized in
            values.withUnsafeBufferPointer { t in
                var i = 0, o = 0
                for _ in 0..<full {
                    let a = t[Int(input[i])], b = t[Int(input[i + 1])], c = t[Int(input[i + 2])], d = t[Int(input[i + 3])]
                    guard (a | b | c | d) & 0xC0 == 0 else { ok = false; return }
                    let v = UInt32(a) << 18 | UInt32(b) << 12 | UInt32(c) << 6 | UInt32(d)
                    buf[o] = UInt8(truncatingIfNeeded: v >> 16); buf[o + 1] = UInt8(truncatingIfNeeded: v >> 8)
                    buf[o + 2] = UInt8(truncatingIfNeeded: v)
                    i += 4; o += 3
                }
                if rest >= 2 {
                    let a = t[Int(input[i])], b = t[Int(input[i + 1])], c = rest == 3 ? t[Int(input[i + 2])] : 0
                    guard (a | b | c) & 0xC0 == 0 else { ok = false; return }
                    if canonical && (rest == 2 ? b & 0x0F : c & 0x03) != 0 { ok = false; return }
                    let v = UInt32(a) << 18 | UInt32(b) << 12 | UInt32(c) << 6
                    buf[o] = UInt8(truncatingIfNeeded: v >> 16)
                    if rest == 3 { buf[o + 1] = UInt8(truncatingIfNeeded: v >> 8) }
                }
            }
            initialized = ok ? length : 0
        }
        return ok ? out : nil
    }
}
