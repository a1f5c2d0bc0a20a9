/// Compact JSON text written straight into bytes, keys sorted (the same text `jsonString()` gives),
/// in one pass. It can also write a value *as the contents of a JSON string* — what a frame's
/// `payloadJSON` field holds — so a large result (a 5 MB snapshot) becomes its frame's bytes in one
/// encode, instead of being encoded, then escaped again inside the frame, then copied.
public struct JSONWriter: Sendable {
    public private(set) var bytes: [UInt8] = []

    public init(reservingCapacity n: Int = 0) { bytes.reserveCapacity(n) }

    /// Raw JSON text (a frame's fixed parts).
    public mutating func raw(_ text: String) { bytes.append(contentsOf: text.utf8) }

    /// `value` as JSON; with `quoted`, as the contents of a JSON string (each `"` and `\` escaped
    /// once more), the caller writing the surrounding quotes.
    public mutating func write(_ value: JSONValue, quoted: Bool = false) {
        switch value {
        case .null: raw("null")
        case .bool(let b): raw(b ? "true" : "false")
        case .number(let n): raw(Self.numberText(n))
        case .string(let s): string(s, quoted: quoted)
        case .array(let items):
            bytes.append(UInt8(ascii: "["))
            for (i, item) in items.enumerated() {
                if i > 0 { bytes.append(UInt8(ascii: ",")) }
                write(item, quoted: quoted)
            }
            bytes.append(UInt8(ascii: "]"))
        case .object(let members):
            bytes.append(UInt8(ascii: "{"))
            for (i, key) in members.keys.sorted().enumerated() {
                if i > 0 { bytes.append(UInt8(ascii: ",")) }
                string(key, quoted: quoted)
                bytes.append(UInt8(ascii: ":"))
                write(members[key]!, quoted: quoted)
            }
            bytes.append(UInt8(ascii: "}"))
        }
    }

    /// A JSON string literal (quotes included). Quoted once more, its quotes become `\"` and each
    /// escape's backslash `\\`.
    public mutating func string(_ s: String, quoted: Bool = false) {
        let quote: [UInt8] = quoted ? [0x5C, 0x22] : [0x22]
        bytes.append(contentsOf: quote)
        var s = s
        s.withUTF8 { utf8 in
            var runStart = 0
            for i in 0..<utf8.count {
                let b = utf8[i]
                guard b < 0x20 || b == 0x22 || b == 0x5C else { continue }
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<i]))
                runStart = i + 1
                let escape: [UInt8]
                switch b {
                case 0x22: escape = [0x5C, 0x22]
                case 0x5C: escape = [0x5C, 0x5C]
                case 0x0A: escape = [0x5C, UInt8(ascii: "n")]
                case 0x0D: escape = [0x5C, UInt8(ascii: "r")]
                case 0x09: escape = [0x5C, UInt8(ascii: "t")]
                case 0x08: escape = [0x5C, UInt8(ascii: "b")]
                case 0x0C: escape = [0x5C, UInt8(ascii: "f")]
                default: escape = Array("\\u00".utf8) + Self.hexDigits(b)
                }
                // Inside a quoted value every backslash of the escape is itself escaped.
                for e in escape {
                    if quoted && (e == 0x5C || e == 0x22) { bytes.append(0x5C) }
                    bytes.append(e)
                }
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<utf8.count]))
        }
        bytes.append(contentsOf: quote)
    }

    /// Integers without a fraction (as JSONValue's encoder writes them); other numbers in Swift's
    /// shortest round-trip form, which is valid JSON. Non-finite numbers have no JSON form: null.
    static func numberText(_ n: Double) -> String {
        guard n.isFinite else { return "null" }
        if n.rounded() == n, abs(n) < 9.0e15 { return String(Int64(n)) }
        return "\(n)"
    }

    private static func hexDigits(_ b: UInt8) -> [UInt8] {
        let digits = Array("0123456789abcdef".utf8)
        return [digits[Int(b >> 4)], digits[Int(b & 0xF)]]
    }
}

extension JSONValue {
    /// Compact JSON bytes with sorted keys, in one pass (JSONWriter).
    public var jsonBytes: [UInt8] {
        var w = JSONWriter()
        w.write(self)
        return w.bytes
    }
}
