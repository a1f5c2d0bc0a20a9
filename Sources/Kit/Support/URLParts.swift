/// An absolute hierarchical URL split by RFC 3986's generic syntax —
/// `scheme://authority/path?query#fragment` — every part kept exactly as written (percent-escapes
/// included): the part of Foundation's URLComponents the node needs. The runtime's gateway URLs
/// (`WebSocketURL`) and the canvas's page URLs are read with it. Text with a character a URL
/// cannot hold unescaped (space, control, non-ASCII, `"<>\^`{|}`) is refused, as
/// URLComponents(string:) refuses it, so nothing built from it is read differently elsewhere.
public struct URLParts: Equatable, Sendable {
    /// Lowercased.
    public var scheme: String
    /// `[userinfo@]host[:port]` as written.
    public var authority: String
    public var path: String
    public var query: String?
    public var fragment: String?

    public init?(string text: String) {
        guard text.unicodeScalars.allSatisfy(Self.allowed), let colon = text.firstIndex(of: ":"),
              let scheme = Self.scheme(of: text) else { return nil }
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
        self.scheme = scheme
        authority = String(rest[..<slash])
        path = String(rest[slash...])
    }

    /// The scheme of `text` lowercased (`ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ) ":"`), nil when
    /// it does not start with one.
    public static func scheme(of text: String) -> String? {
        guard let colon = text.firstIndex(of: ":") else { return nil }
        let candidate = text[..<colon]
        guard let first = candidate.first, first.isASCII, first.isLetter,
              candidate.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) }) else { return nil }
        return candidate.lowercased()
    }

    /// The authority without user information, brackets or port, as written (nil when empty).
    public var hostText: Substring? {
        var a = Substring(authority)
        if let at = a.lastIndex(of: "@") { a = a[a.index(after: at)...] }
        if a.hasPrefix("[") {
            guard let close = a.firstIndex(of: "]") else { return nil }
            return a[a.index(after: a.startIndex)..<close]
        }
        if let c = a.lastIndex(of: ":") { a = a[..<c] }
        return a.isEmpty ? nil : a
    }

    /// What follows the host's `:` (nil when the authority has no port part).
    public var portText: Substring? {
        var a = Substring(authority)
        if let at = a.lastIndex(of: "@") { a = a[a.index(after: at)...] }
        if a.hasPrefix("[") {
            guard let close = a.firstIndex(of: "]") else { return nil }
            a = a[a.index(after: close)...]
            return a.hasPrefix(":") ? a.dropFirst() : nil
        }
        return a.lastIndex(of: ":").map { a[a.index(after: $0)...] }
    }

    /// The host, lowercased (nil when the authority has none).
    public var host: String? { hostText?.lowercased() }

    /// The port written in the authority (nil when none).
    public var port: Int? { portText.flatMap { Int($0) } }

    public var string: String {
        scheme + "://" + authority + path + (query.map { "?" + $0 } ?? "") + (fragment.map { "#" + $0 } ?? "")
    }

    /// RFC 3986's characters: unreserved, reserved and `%`.
    private static func allowed(_ u: Unicode.Scalar) -> Bool {
        guard u.isASCII, u.value > 0x20, u.value < 0x7F else { return false }
        return !"\"<>\\^`{|}".unicodeScalars.contains(u)
    }
}
