import Config
import Glibc
import Kit
import Store
import Support
import Transport

/// One gateway found by discovery (LAN mDNS or wide-area unicast DNS-SD): the same shape from both
/// paths. Where to connect comes from the resolved SRV record (host, port) and its addresses; the
/// TXT record only adds hints (docs/PROTOCOL.md §8.1: TXT is unauthenticated).
public struct DiscoveredGateway: Sendable, Equatable {
    public enum Source: String, Sendable { case lan, wideArea }

    public static let serviceType = "_openclaw-gw._tcp"

    /// The DNS-SD instance name, decoded ("OpenClaw Home GW", not "OpenClaw\032Home\032GW").
    public var instanceName: String
    /// "local." or the wide-area domain.
    public var domain: String
    public var source: Source
    /// The SRV target ("vm.local", "gw.openclaw.internal"), without the trailing dot.
    public var host: String
    /// Resolved addresses, IPv4 first.
    public var addresses: [String]
    /// The SRV port (TXT gatewayPort is a hint only).
    public var port: Int
    public var txt: GatewayTXT
    /// Interfaces it was seen on (LAN only; several when it answered on more than one).
    public var interfaces: [String] = []

    public init(instanceName: String, domain: String, source: Source, host: String, addresses: [String], port: Int,
                txt: GatewayTXT, interfaces: [String] = []) {
        self.instanceName = instanceName; self.domain = domain; self.source = source; self.host = host
        self.addresses = DiscoveredGateway.ordered(addresses); self.port = port; self.txt = txt; self.interfaces = interfaces
    }

    public var displayName: String { txt.displayName ?? instanceName }
    public var tls: Bool { txt.tls }
    /// Only a hint for trust-on-first-use; a configured or stored pin always wins (GatewayTrust).
    public var tlsFingerprintHint: String? { txt.tlsFingerprint }

    /// The full service instance name in DNS text form (escaped), e.g. for `dig`.
    public var fullName: String {
        let inst = DNSSDEscape.escapeLabel(Array(instanceName.utf8))
        return "\(inst).\(DiscoveredGateway.serviceType).\(domain.hasSuffix(".") ? domain : domain + ".")"
    }

    /// The URL `run` connects to: wss when the gateway advertises TLS, else ws; the first usable
    /// address (so no mDNS-capable resolver is needed for `.local` names), an IPv6 link-local one
    /// (with its `%interface`) only when nothing else was resolved, else the host name.
    public var url: WebSocketURL? {
        let scheme = tls ? "wss" : "ws"
        let linkLocal = addresses.first { $0.lowercased().hasPrefix("fe80:") && $0.contains("%") }
        var h = addresses.first(where: { !$0.lowercased().hasPrefix("fe80:") }) ?? linkLocal ?? host
        if h.contains(":") {
            // RFC 6874: the zone separator is %25 inside a URL.
            h = "[\(h.replacing("%", with: "%25"))]"
        }
        return WebSocketURL(string: "\(scheme)://\(h):\(port)")
    }

    /// Notes worth showing: skipped TXT entries, a gatewayPort hint that disagrees with SRV.
    public var notes: [String] {
        var n = txt.problems
        if let hint = txt.gatewayPort, hint != port {
            n.append("TXT gatewayPort=\(hint) differs from the SRV port \(port); using \(port)")
        }
        return n
    }

    public var json: JSONValue {
        var o: [String: JSONValue] = [
            "instanceName": .string(instanceName), "displayName": .string(displayName), "domain": .string(domain),
            "source": .string(source.rawValue), "host": .string(host), "addresses": .array(addresses.map { .string($0) }),
            "port": .number(Double(port)), "tls": .bool(tls), "fullName": .string(fullName),
            "txt": .object(Dictionary(txt.entries.map { ($0.key, JSONValue.string($0.value)) }, uniquingKeysWith: { a, _ in a })),
        ]
        if let u = url { o["url"] = .string(u.absoluteString) }
        if let fp = tlsFingerprintHint { o["tlsFingerprintHint"] = .string("sha256:" + fp) }
        if !interfaces.isEmpty { o["interfaces"] = .array(interfaces.map { .string($0) }) }
        if !notes.isEmpty { o["notes"] = .array(notes.map { .string($0) }) }
        return .object(o)
    }

    /// Loopback first (the gateway runs on this machine: no network needed), then IPv4, then IPv6;
    /// duplicates dropped, order otherwise kept.
    static func ordered(_ addrs: [String]) -> [String] {
        var seen = Set<String>()
        let unique = addrs.filter { !$0.isEmpty && seen.insert($0).inserted }
        let loopback = unique.filter { $0.hasPrefix("127.") || $0 == "::1" }
        let rest = unique.filter { !loopback.contains($0) }
        return loopback + rest.filter { !$0.contains(":") } + rest.filter { $0.contains(":") }
    }
}
