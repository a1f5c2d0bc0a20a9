import Support

/// The YAML-ish frontmatter at the top of a SKILL.md: a `---` line, `key: value` lines, a closing
/// `---` line. Only what skills use is understood — plain, single- and double-quoted scalars, `|`
/// and `>` block scalars, indented continuation lines of a plain scalar, `#` comments — which is
/// all `name` and `description` need; nested keys under another key are skipped, not read as
/// top-level ones. No YAML library: the node ships no outside packages, and the two keys it reads
/// do not need one.
struct SkillFrontmatter: Sendable, Equatable {
    /// Top-level keys and their scalar values (a key given twice keeps the first, as a reader
    /// that stops at the first match would).
    let fields: [String: String]

    subscript(_ key: String) -> String? { fields[key] }

    enum Problem: Error, Equatable, CustomStringConvertible {
        case missing
        case unterminated
        case malformedLine(Int)

        var description: String {
            switch self {
            case .missing: return "it does not start with a frontmatter block (a first line of ---, then name: and description:, then ---)"
            case .unterminated: return "its frontmatter has no closing --- line"
            case .malformedLine(let n): return "line \(n) of its frontmatter is not a key: value line"
            }
        }
    }

    static func parse(_ text: String) throws(Problem) -> SkillFrontmatter {
        // "\r\n" is one Character in Swift: split on both, so CRLF files read like LF ones.
        var lines = text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" })
        if let first = lines.first, first.hasPrefix("\u{FEFF}") { lines[0] = first.dropFirst() }
        guard let first = lines.first, isFence(first) else { throw .missing }
        guard let close = lines.indices.dropFirst().first(where: { isFence(lines[$0]) }) else { throw .unterminated }
        var fields: [String: String] = [:]
        var i = 1
        while i < close {
            let line = lines[i]
            i += 1
            if isBlankOrComment(line) { continue }
            // Indented lines here belong to a key this reader does not use (a nested map, a list).
            if line.first == " " || line.first == "\t" || line.hasPrefix("- ") { continue }
            guard let colon = line.firstIndex(of: ":") else { throw .malformedLine(i) }
            let key = String(line[..<colon]).trimmed()
            guard !key.isEmpty else { throw .malformedLine(i) }
            var raw = String(line[line.index(after: colon)...]).trimmed()
            // The lines that continue this value: indented (or blank) until the next top-level key.
            var more: [Substring] = []
            while i < close, lines[i].isEmpty || lines[i].first == " " || lines[i].first == "\t" {
                more.append(lines[i]); i += 1
            }
            while let last = more.last, last.allSatisfy({ $0 == " " || $0 == "\t" }) { more.removeLast() }
            let value: String
            if let style = raw.first, style == "|" || style == ">" {
                value = blockScalar(more, folded: style == ">", keepFinalNewline: !raw.hasSuffix("-"))
            } else if raw.hasPrefix("\"") || raw.hasPrefix("'") {
                raw = ([raw] + more.map { String($0).trimmed() }).joined(separator: " ")
                value = quoted(raw) ?? raw
            } else if raw.isEmpty || raw.hasPrefix("#") {
                value = ""  // a nested map or list below the key: not a scalar this reader uses
            } else {
                value = ([raw] + more.map(String.init)).map { stripComment($0.trimmed()) }
                    .filter { !$0.isEmpty }.joined(separator: " ")
            }
            if fields[key] == nil { fields[key] = value }
        }
        return SkillFrontmatter(fields: fields)
    }

    private static func isFence(_ line: Substring) -> Bool { line.trimmingTrailingSpaces() == "---" }

    private static func isBlankOrComment(_ line: Substring) -> Bool {
        let t = line.drop { $0 == " " || $0 == "\t" }
        return t.isEmpty || t.hasPrefix("#")
    }

    /// A plain scalar ends at ` #` (a comment; a line that starts with `#` is all comment); a `#`
    /// inside a word is text.
    private static func stripComment(_ s: String) -> String {
        var previous: Character = " "
        for i in s.indices {
            if s[i] == "#", previous == " " || previous == "\t" { return String(s[..<i]).trimmed() }
            previous = s[i]
        }
        return s
    }

    /// `'…'` (a doubled `''` is one quote) or `"…"` (backslash escapes); nil when not closed.
    private static func quoted(_ s: String) -> String? {
        let q = s.first!
        var out = ""
        var it = s.dropFirst().makeIterator()
        while let c = it.next() {
            if c == q {
                if q == "'" {
                    var peek = it
                    if peek.next() == "'" { out.append("'"); it = peek; continue }
                }
                return out
            }
            if q == "\"", c == "\\", let e = it.next() {
                switch e {
                case "n": out.append("\n")
                case "t": out.append("\t")
                case "\"", "\\", "/": out.append(e)
                default: out.append("\\"); out.append(e)
                }
                continue
            }
            out.append(c)
        }
        return nil
    }

    /// `|` keeps the lines, `>` folds them into one paragraph (blank lines stay line breaks); the
    /// common indentation is removed; `|-`/`>-` drop the final line break.
    private static func blockScalar(_ lines: [Substring], folded: Bool, keepFinalNewline: Bool) -> String {
        let indent = lines.filter { !$0.allSatisfy { $0 == " " || $0 == "\t" } }
            .map { $0.prefix { $0 == " " || $0 == "\t" }.count }.min() ?? 0
        let body = lines.map { $0.count >= indent ? String($0.dropFirst(indent)) : "" }
        var text: String
        if folded {
            text = ""
            for (n, line) in body.enumerated() {
                if line.isEmpty { text += "\n"; continue }
                if n > 0, !body[n - 1].isEmpty { text += " " }
                text += line
            }
        } else {
            text = body.joined(separator: "\n")
        }
        return keepFinalNewline && !text.isEmpty ? text + "\n" : text
    }
}

private extension Substring {
    func trimmingTrailingSpaces() -> Substring {
        var s = self
        while let l = s.last, l == " " || l == "\t" { s = s.dropLast() }
        return s
    }
}
