import Support

/// The path globs of `capabilities.files.read`/`write`: `*` any run of characters within one name,
/// `**` any run across directories, `?` one character other than `/`; names starting with a dot
/// match like any other (upstream's gateway matches with dot:true). A pattern ending in "/**" also
/// matches the directory itself, so "~/Documents/**" lets that directory be listed.
struct PathGlob: Sendable, Equatable {
    let pattern: String

    /// `~` and `~/…` are the home directory; the literal directories before the first wildcard are
    /// resolved (realpath) when they exist, since paths are compared in canonical form and a glob
    /// written through a link ("/home" → "/usr/home") would otherwise match nothing.
    init(_ raw: String, home: String) {
        var p = raw.trimmingSpaces
        if p == "~" || p.hasPrefix("~/") { p = home + p.dropFirst() }
        var parts = p.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        let literal = parts.firstIndex { $0.contains("*") || $0.contains("?") } ?? parts.count
        if p.hasPrefix("/"), literal > 1 {
            let prefix = parts[0..<literal].joined(separator: "/")
            if case .success(let real) = CanonicalPath.real(prefix.isEmpty ? "/" : prefix) {
                parts.replaceSubrange(0..<literal, with: real == "/" ? [""] : real.split(separator: "/", omittingEmptySubsequences: false).map(String.init))
            }
        }
        pattern = parts.joined(separator: "/")
    }

    func matches(_ path: String) -> Bool {
        let p = Array(pattern.unicodeScalars), s = Array(path.unicodeScalars)
        if Self.match(p, 0, s, 0) { return true }
        // "/a/**" covers "/a" itself.
        if pattern.hasSuffix("/**") { return Self.match(Array(pattern.dropLast(3).unicodeScalars), 0, s, 0) }
        return false
    }

    private static func match(_ p: [Unicode.Scalar], _ pi: Int, _ s: [Unicode.Scalar], _ si: Int) -> Bool {
        if pi == p.count { return si == s.count }
        if p[pi] == "*" {
            let double = pi + 1 < p.count && p[pi + 1] == "*"
            var next = pi + (double ? 2 : 1)
            // "**/" also matches no directory at all ("/a/**/b" matches "/a/b").
            if double, next < p.count, p[next] == "/", match(p, next + 1, s, si) { return true }
            if double { while next < p.count, p[next] == "*" { next += 1 } }
            var k = si
            while true {
                if match(p, next, s, k) { return true }
                guard k < s.count, double || s[k] != "/" else { return false }
                k += 1
            }
        }
        guard si < s.count else { return false }
        if p[pi] == "?" { return s[si] != "/" && match(p, pi + 1, s, si + 1) }
        return p[pi] == s[si] && match(p, pi + 1, s, si + 1)
    }
}

extension String {
    /// Without leading and trailing white space (JavaScript's trim, which upstream applies).
    var trimmingSpaces: String {
        let isSpace: (Unicode.Scalar) -> Bool = { $0.properties.isWhitespace || $0 == "\u{FEFF}" }
        let scalars = Array(unicodeScalars)
        guard let first = scalars.firstIndex(where: { !isSpace($0) }), let last = scalars.lastIndex(where: { !isSpace($0) }) else { return "" }
        var out = String.UnicodeScalarView()
        out.append(contentsOf: scalars[first...last])
        return String(out)
    }
}
