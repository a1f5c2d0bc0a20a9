/// JSON text laid out as JavaScript's `JSON.stringify(value, null, indent)` lays it out (keys
/// sorted, since an object here has no insertion order): `"key": value`, `{}` and `[]` for empty
/// containers, integers without a fraction, only `"`, `\` and control characters escaped. Used
/// where upstream hashes such text (the exec approvals document), so the stored file looks and
/// hashes like the one upstream's node host writes for the same content.
extension JSONValue {
    public func indentedText(indent: Int = 2) -> String {
        var out = ""
        write(into: &out, level: 0, indent: String(repeating: " ", count: indent))
        return out
    }

    private func write(into out: inout String, level: Int, indent: String) {
        switch self {
        case .null: out += "null"
        case .bool(let b): out += b ? "true" : "false"
        case .number(let n): out += Self.numberText(n)
        case .string(let s): Self.quote(s, into: &out)
        case .array(let a):
            if a.isEmpty { out += "[]"; return }
            out += "["
            for (i, v) in a.enumerated() {
                out += (i == 0 ? "\n" : ",\n") + String(repeating: indent, count: level + 1)
                v.write(into: &out, level: level + 1, indent: indent)
            }
            out += "\n" + String(repeating: indent, count: level) + "]"
        case .object(let o):
            if o.isEmpty { out += "{}"; return }
            out += "{"
            for (i, key) in o.keys.sorted().enumerated() {
                out += (i == 0 ? "\n" : ",\n") + String(repeating: indent, count: level + 1)
                Self.quote(key, into: &out)
                out += ": "
                o[key]!.write(into: &out, level: level + 1, indent: indent)
            }
            out += "\n" + String(repeating: indent, count: level) + "}"
        }
    }

    static func numberText(_ n: Double) -> String {
        guard n.isFinite else { return "null" }  // as JSON.stringify does
        // JavaScript writes integers below 1e21 in full; beyond Int64 they need a wider type.
        if n == n.rounded(), abs(n) < 9.0e18 { return String(Int64(n)) }
        if n == n.rounded(), abs(n) < 1e21 { return (n < 0 ? "-" : "") + String(UInt128(abs(n))) }
        return "\(n)"
    }

    static func quote(_ s: String, into out: inout String) {
        out += "\""
        for u in s.unicodeScalars {
            switch u {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case "\u{08}": out += "\\b"
            case "\u{0C}": out += "\\f"
            case _ where u.value < 0x20: out += "\\u" + u.value.hex(4)
            default: out.unicodeScalars.append(u)
            }
        }
        out += "\""
    }
}
