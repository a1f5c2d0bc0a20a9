/// Parses the `KEY=value` files systemd and distributions share (os-release(5), locale.conf(5),
/// /etc/default/locale, machine-info(5)). They are specified as shell-compatible assignments, so
/// values may be double-quoted with backslash escapes, single-quoted, or bare; a naive
/// "split at = and trim quotes" gets `NAME="Foo \"Bar\""` wrong.
public enum ShellAssignments {
    public static func parse(_ text: String) -> [String: String] {
        var result: [String: String] = [:]
        // isNewline, not "\n": Swift treats "\r\n" as one Character, so files saved with CRLF
        // would otherwise come out as a single line.
        for rawLine in text.split(whereSeparator: \.isNewline) {
            var line = rawLine.drop(while: { $0 == " " || $0 == "\t" })
            if line.hasPrefix("export ") { line = line.dropFirst("export ".count) }
            guard !line.hasPrefix("#"), let eq = line.firstIndex(of: "=") else { continue }
            let key = String(line[line.startIndex..<eq])
            guard isValidKey(key) else { continue }
            result[key] = unquote(line[line.index(after: eq)...])
        }
        return result
    }

    private static func isValidKey(_ key: String) -> Bool {
        guard let first = key.unicodeScalars.first, first == "_" || (first.isASCII && first.properties.isAlphabetic) else { return false }
        return key.unicodeScalars.allSatisfy { $0 == "_" || ($0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0))) }
    }

    /// One shell word: quoted and bare pieces concatenate; unquoted whitespace ends the value
    /// (whatever follows is a trailing comment or junk the shell would also not assign).
    public static func unquote(_ raw: Substring) -> String {
        var out = ""
        var it = raw.makeIterator()
        while let c = it.next() {
            switch c {
            case "\"":
                while let d = it.next(), d != "\"" {
                    if d == "\\", let e = it.next() {
                        // Inside double quotes only these lose their backslash; elsewhere it stays.
                        if "\"\\$`".contains(e) { out.append(e) } else { out.append(d); out.append(e) }
                    } else {
                        out.append(d)
                    }
                }
            case "'":
                while let d = it.next(), d != "'" { out.append(d) }
            case "\\":
                if let e = it.next() { out.append(e) }
            case " ", "\t":
                return out
            default:
                out.append(c)
            }
        }
        return out
    }
}
