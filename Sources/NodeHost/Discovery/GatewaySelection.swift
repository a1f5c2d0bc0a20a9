import Config
import GatewaySession
import Glibc
import Kit
import Store
import Support
import Transport

/// Which discovered gateway `run` connects to, when gateway.url is not set:
///   1. gateway.name, matched against the instance name (a `\032`-escaped name copied from
///      avahi-browse matches too), else against the display name when exactly one has it — and
///      nothing else, even if others exist;
///   2. the gateway chosen last time (remembered in the state database), found on the same path
///      (LAN or wide-area), when it is present;
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

    public static func decide(_ candidates: [DiscoveredGateway], name: String?, remembered: String?,
                              rememberedSource: DiscoveredGateway.Source? = nil, settled: Bool) -> Decision {
        let unique = distinct(candidates)
        if let name, !name.isEmpty {
            let want = DNSSDEscape.unescape(name).lowercased()
            // The instance name first: the display name is an unauthenticated TXT hint any
            // announcement can copy, so it only decides when it is unambiguous.
            if let g = unique.first(where: { $0.instanceName.lowercased() == want }) {
                return .connect(g, reason: "it matches gateway.name \"\(name)\"")
            }
            let byDisplay = unique.filter { $0.displayName.lowercased() == want }
            if byDisplay.count == 1 { return .connect(byDisplay[0], reason: "its display name matches gateway.name \"\(name)\"") }
            if byDisplay.count > 1 {
                return .wait("several gateways call themselves \"\(name)\": \(list(byDisplay)); set gateway.name to the instance name of one")
            }
            return .wait(unique.isEmpty ? "no gateway named \"\(name)\" found yet (none found at all so far)"
                                        : "no gateway named \"\(name)\" among: \(list(unique))")
        }
        if let remembered {
            // The same instance on the path it was found on before; a LAN announcement of that
            // name does not stand in for a remembered wide-area gateway.
            let same = candidates.filter { $0.instanceName.lowercased() == remembered.lowercased() }
            if let g = same.first(where: { rememberedSource == nil || $0.source == rememberedSource }) {
                return .connect(g, reason: "it was chosen before")
            }
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

    /// Where the remembered gateway was found (LAN or wide-area).
    public static func rememberedSource(in store: StateStore) -> DiscoveredGateway.Source? {
        guard let text = try? store.setting(rememberedKey) else { return nil }
        return JSONValue.parse(text)?["source"]?.stringValue.flatMap(DiscoveredGateway.Source.init(rawValue:))
    }

    /// The URL to connect to `g` with, keeping earlier trust: when this is the gateway chosen
    /// before and its certificate was pinned at its old address, the pin is copied to the new
    /// address (stored pins are never overridden by a TXT hint, so an impostor announcing the
    /// same name cannot get a connection), and — like with gateway.tlsFingerprint — the
    /// connection is wss:// whatever the TXT record says about TLS. nil when `g` has no address.
    public static func connectURL(for g: DiscoveredGateway, configuredPin: String?, store: StateStore,
                                  log: Logger) -> WebSocketURL? {
        guard var url = g.url else { return nil }
        var pin = configuredPin
        if pin == nil, let text = try? store.setting(rememberedKey), let r = JSONValue.parse(text),
           r["instanceName"]?.stringValue?.lowercased() == g.instanceName.lowercased(),
           let old = r["url"]?.stringValue.flatMap(WebSocketURL.init(string:)),
           // Pins only exist for wss:// (the remembered URL is what TXT advertised, maybe ws://).
           let oldKey = GatewayClient.key(for: old.with(scheme: "wss")) {
            pin = (try? store.gateway(oldKey))??.tlsPin
        }
        guard let pin else { return url }
        if url.scheme == "ws" {
            url = url.with(scheme: "wss")
            log.info("connecting to \"\(g.displayName)\" with wss:// although it does not advertise TLS: its certificate is pinned")
        }
        if configuredPin == nil, let key = GatewayClient.key(for: url) {
            var record = ((try? store.gateway(key)) ?? nil) ?? StateStore.GatewayRecord(gateway: key, url: url.absoluteString)
            if record.tlsPin == nil {
                record.tlsPin = pin
                do { try store.saveGateway(record) } catch { log.warn("could not keep the TLS pin for \(key): \(error)") }
            }
        }
        return url
    }

}
