import Config
import Discovery
import Glibc
import HostPresence
import Kit
import Registry
import Store
import Support

/// `openclaw-node discover`: what each discovery path finds right now, and why a path is off or
/// cannot work — the same view `run` uses when gateway.url is not set.
enum DiscoverCommand {
    static let help = """
        Usage: openclaw-node discover [--json] [--timeout S] [--config FILE]

        Looks for OpenClaw gateways (DNS-SD service _openclaw-gw._tcp) on every path the config
        enables, and lists what each found:
          LAN        mDNS in local. through avahi-daemon (gateway.discovery.lan, default true).
                     Needs avahi-daemon and the D-Bus system bus (DBUS_SYSTEM_BUS_ADDRESS is honoured).
          wide-area  unicast DNS-SD in gateway.discovery.wideAreaDomain (or OPENCLAW_WIDE_AREA_DOMAIN),
                     e.g. a tailnet's split-DNS zone, through the system resolver or
                     gateway.discovery.nameserver (host[:port]).

        For each gateway it prints the name, the URL `run` would connect to (wss:// when the gateway
        advertises TLS), the addresses and port from its SRV record, the TLS fingerprint hint and
        the TXT record. TXT entries are unauthenticated hints; an advertised fingerprint is only
        checked on a first connect and never replaces a pinned one.

        Options:
          --json        print one JSON object: {"paths": {"lan": …, "wideArea": …}, "gateways": […]}
          --timeout S   browse for at most S seconds (default 3; LAN stops early once avahi-daemon
                        has reported what it knows and every gateway is resolved)

        Exit status: 0 when at least one gateway was found, 1 when none, 64 on usage errors.
        """

    static func main(_ args: [String]) async throws -> Int32 {
        let a = try Arguments(args, valued: ["config", "timeout"], known: ["json"])
        if a.flag("help") { Out.line(help); return ExitCode.ok.rawValue }
        var timeout = 3.0
        if let t = a.option("timeout") {
            guard let v = Double(t), v > 0, v <= 600 else { throw Arguments.Failure(description: "--timeout needs seconds between 0 and 600, got \"\(t)\"") }
            timeout = v
        }
        let config = try CLI.loadConfig(a)
        let (lan, wide, elapsed) = await GatewayDiscovery.snapshot(config: config.gateway, timeout: .milliseconds(Int(timeout * 1000)))
        let all = lan.gateways + wide.gateways
        var manual: String?
        if let url = config.gateway.url { manual = "gateway.url is set (\(url)): `run` connects to it and skips discovery" }

        if a.flag("json") {
            var out: [String: JSONValue] = [
                "paths": ["lan": json(lan), "wideArea": json(wide)],
                "gateways": .array(all.map(\.json)),
                "elapsedMs": .number(Double(elapsed.milliseconds)),
            ]
            if let manual { out["note"] = .string(manual) }
            Out.json(.object(out))
            return all.isEmpty ? ExitCode.failure.rawValue : ExitCode.ok.rawValue
        }

        for r in [lan, wide] {
            let title = r.name == "lan" ? "LAN (mDNS, local.)" : "Wide-area DNS-SD"
            Out.line("\(title): \(text(r.state, found: r.gateways.count))")
            for g in r.gateways { print(g) }
            for n in r.notes { Out.line("  note: \(n)") }
        }
        if let manual { Out.line(manual) }
        if all.isEmpty { Out.line("No gateway found after \((Double(elapsed.milliseconds) / 1000).fixed(1)) s.") }
        return all.isEmpty ? ExitCode.failure.rawValue : ExitCode.ok.rawValue
    }

    private static func print(_ g: DiscoveredGateway) {
        Out.line("  \(g.displayName)\(g.displayName != g.instanceName ? " [\(g.instanceName)]" : "")")
        Out.line("    url:       \(g.url?.absoluteString ?? "-")")
        Out.line("    host:      \(g.host) port \(g.port)\(g.addresses.isEmpty ? "" : ", addresses \(g.addresses.joined(separator: ", "))")" +
                 (g.interfaces.isEmpty ? "" : " on \(g.interfaces.joined(separator: ", "))"))
        if let fp = g.tlsFingerprintHint { Out.line("    tls hint:  sha256:\(fp)") }
        if !g.txt.entries.isEmpty { Out.line("    txt:       \(g.txt.entries.map { $0.value.isEmpty ? $0.key : "\($0.key)=\($0.value)" }.joined(separator: " "))") }
        for n in g.notes { Out.line("    note:      \(n)") }
    }

    private static func text(_ s: GatewayDiscovery.PathState, found: Int) -> String {
        switch s {
        case .off(let why): return "off (\(why))"
        case .unavailable(let why): return "unavailable: \(why)"
        case .searching(let what): return found == 0 ? "nothing yet; still \(what) when the timeout ran out" : "\(found) found (still \(what))"
        case .ready: return found == 0 ? "none found" : "\(found) found"
        }
    }

    private static func json(_ r: GatewayDiscovery.PathReport) -> JSONValue {
        var o: [String: JSONValue] = ["count": .number(Double(r.gateways.count))]
        switch r.state {
        case .off(let why): o["status"] = "off"; o["reason"] = .string(why)
        case .unavailable(let why): o["status"] = "unavailable"; o["reason"] = .string(why)
        case .searching(let what): o["status"] = "timedOut"; o["reason"] = .string("still \(what) when the timeout ran out")
        case .ready: o["status"] = "ok"
        }
        if !r.notes.isEmpty { o["notes"] = .array(r.notes.map { .string($0) }) }
        return .object(o)
    }
}
