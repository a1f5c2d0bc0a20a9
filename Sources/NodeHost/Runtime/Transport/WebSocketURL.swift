import Support

/// A gateway URL (`ws://host:port/path?query`, `wss://…`), parsed by RFC 3986's generic syntax:
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
        guard let sep = text.firstRange(of: "://") else { return nil }
        let scheme = text[..<sep.lowerBound]
        guard let first = scheme.first, first.isASCII, first.isLetter,
              scheme.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) }) else { return nil }
        var rest = text[sep.upperBound...]
        if let hash = rest.firstIndex(of: "#") { rest = rest[..<hash] }
        let authorityEnd = rest.firstIndex(where: { $0 == "/" || $0 == "?" }) ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        guard !authority.contains("@"), let (host, port) = Self.hostAndPort(authority) else { return nil }
        let tail = rest[authorityEnd...]
        let path: Substring, query: Substring?
        if let q = tail.firstIndex(of: "?") { path = tail[..<q]; query = tail[tail.index(after: q)...] } else { path = tail; query = nil }
        guard !(path + (query ?? "")).contains(where: { $0.isWhitespace || ($0.asciiValue ?? 0x20) < 0x20 }) else { return nil }
        self.scheme = scheme.lowercased()
        self.host = host
        self.port = port
        self.path = String(path)
        self.query = query.map(String.init)
        self.authority = String(authority)
        self.absoluteString = String(text[..<rest.endIndex])
    }

    /// The same URL with another scheme (`ws://` learnt from discovery, connected as `wss://`).
    public func with(scheme: String) -> WebSocketURL {
        WebSocketURL(string: scheme + "://" + authority + path + (query.map { "?" + $0 } ?? ""))!
    }

    /// Splits `host[:port]` or `[v6]:port`; nil when either part is malformed.
    private static func hostAndPort(_ authority: Substring) -> (String, Int?)? {
        var hostText: Substring, portText: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return nil }
            hostText = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            if after.isEmpty { portText = nil }
            else if after.hasPrefix(":") { portText = after.dropFirst() }
            else { return nil }
        } else if let colon = authority.firstIndex(of: ":") {
            hostText = authority[..<colon]
            portText = authority[authority.index(after: colon)...]
        } else {
            hostText = authority
            portText = nil
        }
        guard !hostText.isEmpty, let host = percentDecoded(hostText),
              !host.contains(where: { $0.isWhitespace || ($0.asciiValue ?? 0x20) < 0x20 || "/?#[]@".contains($0) }) else { return nil }
        var port: Int?
        if let p = portText, !p.isEmpty {
            guard p.count <= 5, p.allSatisfy({ $0.isASCII && $0.isNumber }), let n = Int(p), n <= 65535 else { return nil }
            port = n
        }
        return (host, port)
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
