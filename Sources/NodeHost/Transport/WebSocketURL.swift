import Support

/// A gateway URL (`ws://host:port/path?query`, `wss://…`), split by Support's URLParts (RFC 3986):
/// what the node needs of Foundation's URL, without linking Foundation. The host comes without
/// IPv6 brackets and with percent-escapes decoded (`[fe80::1%25eth0]` → `fe80::1%eth0`, which
/// is what getaddrinfo takes). User information (`user:pass@`) is refused: a gateway credential
/// belongs in gateway.token or gateway.password, not in a URL that ends up in logs.
public struct WebSocketURL: Sendable, Equatable, CustomStringConvertible {
    /// Lowercased ("ws", "wss"; any scheme parses, callers check which they accept).
    public let scheme: String
    public let host: String
    public let port: Int?
    /// "" when the URL has none.
    public let path: String
    public let query: String?
    /// The text it was made from (fragment removed).
    public let absoluteString: String
    /// `host[:port]` as written (brackets and escapes kept), for rebuilding the URL.
    private let authority: String

    public var description: String { absoluteString }

    public init?(string text: String) {
        guard let parts = URLParts(string: text), !parts.authority.contains("@"), let written = parts.hostText,
              let host = Self.percentDecoded(written),
              !host.contains(where: { $0.isWhitespace || ($0.asciiValue ?? 0x20) < 0x20 || "/?#[]@".contains($0) }) else { return nil }
        let bracketed = parts.authority.hasPrefix("[")
        // The authority is exactly host[:port]: a colon inside an unbracketed host, or anything but
        // a port after a bracketed one, is malformed.
        guard bracketed || !written.contains(":"),
              parts.authority == (bracketed ? "[\(written)]" : String(written)) + (parts.portText.map { ":" + $0 } ?? "") else { return nil }
        var port: Int?
        if let p = parts.portText, !p.isEmpty {
            guard p.count <= 5, p.allSatisfy({ $0.isASCII && $0.isNumber }), let n = Int(p), n <= 65535 else { return nil }
            port = n
        }
        scheme = parts.scheme
        self.host = host
        self.port = port
        path = parts.path
        query = parts.query
        authority = parts.authority
        absoluteString = String(text.prefix { $0 != "#" })
    }

    /// The same URL with another scheme (`ws://` learnt from discovery, connected as `wss://`).
    public func with(scheme: String) -> WebSocketURL {
        WebSocketURL(string: scheme + "://" + authority + path + (query.map { "?" + $0 } ?? ""))!
    }

    /// Another resource on the same origin, below this URL's path as a context prefix
    /// (`wss://gw/openclaw` + `/node-desktop/attach?ticket=…` → `wss://gw/openclaw/node-desktop/attach?ticket=…`).
    /// nil unless `pathAndQuery` is an absolute path (no `//`, `..`, fragment or whitespace) and
    /// the result keeps this URL's scheme, host and port.
    public func sameOrigin(pathAndQuery: String) -> WebSocketURL? {
        guard pathAndQuery.hasPrefix("/"), !pathAndQuery.hasPrefix("//"), !pathAndQuery.contains("#"),
              !pathAndQuery.contains(where: { $0.isWhitespace || ($0.asciiValue ?? 0x20) < 0x20 }),
              !pathAndQuery.split(separator: "?", maxSplits: 1)[0].split(separator: "/").contains("..") else { return nil }
        var prefix = path
        while prefix.hasSuffix("/") { prefix.removeLast() }
        guard let u = WebSocketURL(string: scheme + "://" + authority + prefix + pathAndQuery),
              u.scheme == scheme, u.host == host, u.port == port else { return nil }
        return u
    }

    private static func percentDecoded(_ s: Substring) -> String? {
        guard s.contains("%") else { return String(s) }
        var out: [UInt8] = []
        var bytes = Array(s.utf8)[...]
        while let b = bytes.popFirst() {
            guard b == UInt8(ascii: "%") else { out.append(b); continue }
            guard bytes.count >= 2, let v = UInt8(String(decoding: bytes.prefix(2), as: UTF8.self), radix: 16) else { return nil }
            out.append(v)
            bytes = bytes.dropFirst(2)
        }
        return String(validating: out, as: UTF8.self)
    }
}
