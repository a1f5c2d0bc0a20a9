import Glibc

/// A network address as people write it in config: "host", "host:port", "[v6addr]:port", "[v6addr]"
/// or a bare IPv6 literal (several colons, no port). One parser for every `host[:port]` key
/// (gpsd, the DNS-SD nameserver).
public struct HostPort: Sendable, Equatable, CustomStringConvertible {
    public let host: String
    public let port: Int

    public init(host: String, port: Int) { self.host = host; self.port = port }

    /// nil when the text is empty, the host is empty, or the port is not 1–65535.
    public init?(_ text: String, defaultPort: Int) {
        let t = text.trimmed()
        guard !t.isEmpty else { return nil }
        var host = t
        var portText: Substring?
        if t.hasPrefix("[") {
            guard let close = t.firstIndex(of: "]") else { return nil }
            host = String(t[t.index(after: t.startIndex)..<close])
            let rest = t[t.index(after: close)...]
            if !rest.isEmpty {
                guard rest.hasPrefix(":") else { return nil }
                portText = rest.dropFirst()
            }
        } else if let colon = t.firstIndex(of: ":"), colon == t.lastIndex(of: ":") {
            host = String(t[..<colon])
            portText = t[t.index(after: colon)...]
        }
        var port = defaultPort
        if let portText {
            guard let p = Int(portText), (1...65_535).contains(p) else { return nil }
            port = p
        }
        guard !host.isEmpty else { return nil }
        self.host = host
        self.port = port
    }

    /// "host:port", with brackets around an IPv6 host.
    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}
