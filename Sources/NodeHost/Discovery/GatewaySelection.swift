import Foundation

/// Which discovered gateway `run` connects to, when gateway.url is not set:
///   1. gateway.name, matched against the display name or the instance name (a `\032`-escaped
///      name copied from avahi-browse matches too) — and nothing else, even if others exist;
///   2. the gateway chosen last time (remembered in the state database), when it is present;
///   3. the only gateway found — once discovery has settled, so a second one that answers a
///      moment later is not silently ignored;
///   4. otherwise wait and list the candidates: picking one of several would be a guess.
/// The same gateway seen on the LAN and wide-area counts once; the LAN copy is used.
public enum GatewaySelection {
    public enum Decision: Sendable, Equatable {
        case connect(DiscoveredGateway, reason: String)
        case wait(String)
    }

    /// Settings key of the remembered choice (JSON: instanceName, displayName, source, url).
    public static let rememberedKey = "discovery.chosenGateway"

    public static func decide(_ candidates: [DiscoveredGateway], name: String?, remembered: String?, settled: Bool) -> Decision {
        let unique = distinct(candidates)
        if let name, !name.isEmpty {
            let want = DNSSDEscape.unescape(name).lowercased()
            if let g = unique.first(where: { $0.displayName.lowercased() == want || $0.instanceName.lowercased() == want }) {
                return .connect(g, reason: "it matches gateway.name \"\(name)\"")
            }
            return .wait(unique.isEmpty ? "no gateway named \"\(name)\" found yet (none found at all so far)"
                                        : "no gateway named \"\(name)\" among: \(list(unique))")
        }
        if let remembered, let g = unique.first(where: { $0.instanceName.lowercased() == remembered.lowercased() }) {
            return .connect(g, reason: "it was chosen before")
        }
        if unique.count == 1 {
            return settled ? .connect(unique[0], reason: "it is the only gateway found") : .wait("found one gateway; waiting a moment for others")
        }
        if unique.isEmpty { return .wait("no gateway found yet") }
        return .wait("found \(unique.count) gateways: \(list(unique)). Set gateway.name to one of them (or gateway.url)")
    }

    /// One entry per instance name, first occurrence (LAN before wide-area) kept.
    static func distinct(_ gateways: [DiscoveredGateway]) -> [DiscoveredGateway] {
        var seen = Set<String>()
        return gateways.filter { seen.insert($0.instanceName.lowercased()).inserted }
    }

    static func list(_ gateways: [DiscoveredGateway]) -> String {
        gateways.map { g in "\"\(g.displayName)\" (\(g.url?.absoluteString ?? g.host), \(g.source == .lan ? "LAN" : "wide-area"))" }
            .joined(separator: ", ")
    }

    // MARK: remembering

    public static func remember(_ g: DiscoveredGateway, in store: StateStore) throws(StateStore.Failure) {
        let v: JSONValue = ["instanceName": .string(g.instanceName), "displayName": .string(g.displayName),
                            "source": .string(g.source.rawValue), "url": .string(g.url?.absoluteString ?? "")]
        try store.setSetting(rememberedKey, v.jsonString())
    }

    /// The instance name chosen last time, if any.
    public static func remembered(in store: StateStore) -> String? {
        guard let text = try? store.setting(rememberedKey) else { return nil }
        return JSONValue.parse(text)?["instanceName"]?.stringValue
    }
}
