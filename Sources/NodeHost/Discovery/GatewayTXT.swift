import Config
import Kit
import Store
import Support
import Transport

/// A gateway's TXT record (docs/PROTOCOL.md §8.1), read the way RFC 6763 §6 says: `key=value` or
/// a bare `key`; keys are case-insensitive and only the first occurrence counts. Everything in it
/// is an unauthenticated hint. A bad entry (empty, no key, a key with non-printable bytes, a value
/// that is not UTF-8, a port that is not a port) is skipped with a note; the service is kept.
public struct GatewayTXT: Sendable, Equatable {
    /// Keys as the gateway wrote them (first occurrence), values as text ("" for a bare key).
    public private(set) var entries: [(key: String, value: String)] = []
    /// Why entries were skipped, for `discover` and the debug log.
    public private(set) var problems: [String] = []

    public static func == (a: GatewayTXT, b: GatewayTXT) -> Bool {
        a.entries.map(\.key) == b.entries.map(\.key) && a.entries.map(\.value) == b.entries.map(\.value) && a.problems == b.problems
    }

    public init(strings: [[UInt8]]) {
        var seen = Set<String>()
        for raw in strings {
            if raw.isEmpty { continue } // RFC 6763 §6.1: an empty TXT record is one empty string
            let eq = raw.firstIndex(of: UInt8(ascii: "="))
            let keyBytes = raw[..<(eq ?? raw.endIndex)]
            guard !keyBytes.isEmpty else { problems.append("skipped TXT entry with no key: \(GatewayTXT.show(raw))"); continue }
            guard keyBytes.allSatisfy({ (0x20...0x7E).contains($0) }) else {
                problems.append("skipped TXT entry whose key is not printable ASCII: \(GatewayTXT.show(raw))"); continue
            }
            let key = String(decoding: keyBytes, as: UTF8.self)
            var value = ""
            if let eq {
                guard let v = String(validating: raw[raw.index(after: eq)...], as: UTF8.self) else {
                    problems.append("skipped TXT entry \(key): its value is not UTF-8"); continue
                }
                value = v
            }
            guard seen.insert(key.lowercased()).inserted else {
                problems.append("ignored repeated TXT key \(key)"); continue
            }
            entries.append((key, value))
        }
        checkTyped()
    }

    /// The value of a key, matched case-insensitively.
    public subscript(_ key: String) -> String? {
        let k = key.lowercased()
        return entries.first { $0.key.lowercased() == k }?.value
    }

    public var displayName: String? { self["displayName"].flatMap { $0.isEmpty ? nil : $0 } }
    public var gatewayPort: Int? { self["gatewayPort"].flatMap(GatewayTXT.port) }
    public var canvasPort: Int? { self["canvasPort"].flatMap(GatewayTXT.port) }
    public var tls: Bool { ["1", "true", "yes"].contains(self["gatewayTls"]?.lowercased() ?? "") }
    /// `gatewayTlsSha256` normalised to 64 lower-case hex digits; nil when absent or not a SHA-256.
    public var tlsFingerprint: String? {
        guard let raw = self["gatewayTlsSha256"] else { return nil }
        let fp = TLSPolicy.normalizeFingerprint(raw)
        return fp.count == 64 ? fp : nil
    }

    /// Notes about typed keys whose values cannot be used (the key is then treated as absent).
    private mutating func checkTyped() {
        for key in ["gatewayPort", "canvasPort", "sshPort"] {
            if let v = self[key], GatewayTXT.port(v) == nil { problems.append("ignored TXT \(key)=\(v): not a port number") }
        }
        if self["gatewayTlsSha256"] != nil && tlsFingerprint == nil {
            problems.append("ignored TXT gatewayTlsSha256: not a SHA-256 fingerprint (64 hex digits)")
        }
    }

    static func port(_ s: String) -> Int? { Int(s).flatMap { (1...65_535).contains($0) ? $0 : nil } }

    /// A raw entry for a message: printable ASCII as is, anything else as \DDD.
    static func show(_ raw: [UInt8]) -> String { "\"" + DNSSDEscape.escapeLabel(raw) + "\"" }
}
