/// An absolute URL split by RFC 3986's generic syntax — `scheme://authority/path?query#fragment`,
/// every part kept exactly as written (percent-escapes included) — for resolving canvas targets
/// against the gateway's canvas host and for comparing page origins. The part of Foundation's
/// URLComponents the canvas needs. Text with a character a URL cannot hold unescaped (space,
/// control, non-ASCII, `"<>\^`{|}`) is refused, as URLComponents(string:) refuses it, so nothing
/// this builds is a URL the browser would read differently.
struct WebURLParts: Equatable {
    /// Lowercased.
    var scheme: String
    /// `[userinfo@]host[:port]` as written.
    var authority: String
    var path: String
    var query: String?
    var fragment: String?

    init?(string text: String) {
        guard text.unicodeScalars.allSatisfy(Self.allowed), let colon = text.firstIndex(of: ":") else { return nil }
        let scheme = text[..<colon]
        guard let first = scheme.first, first.isLetter,
              scheme.allSatisfy({ $0.isLetter || $0.isNumber || "+-.".contains($0) }) else { return nil }
        var rest = text[text.index(after: colon)...]
        guard rest.hasPrefix("//") else { return nil }  // only hierarchical URLs have a host
        rest = rest.dropFirst(2)
        if let hash = rest.firstIndex(of: "#") {
            fragment = String(rest[rest.index(after: hash)...])
            rest = rest[..<hash]
        }
        if let q = rest.firstIndex(of: "?") {
            query = String(rest[rest.index(after: q)...])
            rest = rest[..<q]
        }
        let slash = rest.firstIndex(of: "/") ?? rest.endIndex
        self.scheme = scheme.lowercased()
        authority = String(rest[..<slash])
        path = String(rest[slash...])
    }

    /// The host, lowercased, without brackets or port (nil when the authority has none).
    var host: String? {
        var a = Substring(authority)
        if let at = a.lastIndex(of: "@") { a = a[a.index(after: at)...] }
        if a.hasPrefix("["), let close = a.firstIndex(of: "]") { return a[a.index(after: a.startIndex)..<close].lowercased() }
        if let c = a.lastIndex(of: ":") { a = a[..<c] }
        return a.isEmpty ? nil : a.lowercased()
    }

    /// The port written in the authority (nil when none).
    var port: Int? {
        guard let c = authority.lastIndex(of: ":"), !authority[c...].contains("]") else { return nil }
        return Int(authority[authority.index(after: c)...])
    }

    var string: String {
        scheme + "://" + authority + path + (query.map { "?" + $0 } ?? "") + (fragment.map { "#" + $0 } ?? "")
    }

    /// RFC 3986's characters: unreserved, reserved and `%`.
    private static func allowed(_ u: Unicode.Scalar) -> Bool {
        guard u.isASCII, u.value > 0x20, u.value < 0x7F else { return false }
        return !"\"<>\\^`{|}".unicodeScalars.contains(u)
    }
}
