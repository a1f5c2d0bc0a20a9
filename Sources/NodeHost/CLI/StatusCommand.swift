import Config
import ControlLink
import GatewaySession
import Glibc
import HostPresence
import Kit
import NodeDaemon
import Registry
import Store
import Support

/// `openclaw-node status [--json]`: identity, state and pairing as stored, plus the live daemon's
/// view (presence, connection) when one is running.
enum StatusCommand {
    static let help = """
        Usage: openclaw-node status [--json] [--config FILE]

        Shows the device id and public key, the state directory, each known gateway with its pairing
        state, and — when the daemon is running — its presence and connection.
        """

    static func main(_ args: [String]) async throws -> Int32 {
        let a = try Arguments(args, valued: ["config"], known: ["json"])
        if a.flag("help") { Out.line(help); return ExitCode.ok.rawValue }
        let config = try CLI.loadConfig(a)
        let store = try StateStore(stateDir: config.stateDir)
        let id = try store.identity()
        let mode = PathName.permissions(store.path)?.octal()
        let gateways: [JSONValue] = try store.gateways().map { g in
            var o: [String: JSONValue] = ["gateway": .string(g.gateway), "url": .string(g.url),
                                          "pairing": .string(g.pairingDescription)]
            o["pairingState"] = .string(g.pairingState.rawValue)
            if let r = g.pairingRequestId { o["pairingRequestId"] = .string(r) }
            if let p = g.tlsPin { o["tlsPin"] = .string(p) }
            if let e = g.lastError { o["lastError"] = .string(e) }
            if let s = g.lastSeenMs { o["lastSeenMs"] = .number(Double(s)) }
            o["hasDeviceToken"] = .bool((try? store.deviceToken(gateway: g.gateway, role: "node")) != nil)
            o["hasOperatorToken"] = .bool((try? store.deviceToken(gateway: g.gateway, role: "operator")) != nil)
            return .object(o)
        }
        var daemon: JSONValue = ["running": false]
        if let client = ControlClient.connect(stateDir: config.stateDir),
           let reply = try? client.request(["op": "status"]), let s = reply["status"] {
            daemon = s
        }
        var out: [String: JSONValue] = [
            "deviceId": .string(id.deviceId), "publicKey": .string(id.publicKeyBase64url),
            "displayName": .string(config.displayName), "stateDir": .string(config.stateDir),
            "database": .string(store.path), "schemaVersion": .number(Double(try store.schemaVersion())),
            "gateways": .array(gateways), "daemon": daemon, "version": .string(NodeVersion.version),
        ]
        if let url = PairingLink.rememberedURL(store) {
            // What `openclaw-node pair` (or a gateway.setupCode join URL) stored.
            out["pairedGateway"] = ["url": .string(url), "urls": .array(PairingLink.rememberedURLs(store).map { .string($0) })]
        }
        let lastCheck = UpdateCheck.read(stateDir: config.stateDir)
        if let c = lastCheck { out["lastUpdateCheck"] = ["atMs": .number(Double(c.atMs)), "result": .string(c.result)] }
        if let mode { out["databaseMode"] = .string(mode) }
        if let aside = store.movedAside { out["movedAside"] = .string(aside) }
        if a.flag("json") { Out.json(.object(out)); return ExitCode.ok.rawValue }

        Out.line("Device id:    \(id.deviceId)")
        Out.line("Public key:   \(id.publicKeyBase64url)")
        Out.line("Name:         \(config.displayName)")
        Out.line("State:        \(store.path)\(mode.map { " (mode \($0))" } ?? "")")
        if let aside = store.movedAside { Out.line("Warning:      a damaged state database was moved to \(aside)") }
        if gateways.isEmpty { Out.line("Gateways:     none yet") }
        for g in try store.gateways() { Out.line("Gateway:      \(g.url) — \(g.pairingDescription)") }
        if let url = PairingLink.rememberedURL(store) {
            let more = PairingLink.rememberedURLs(store).filter { $0 != url }
            Out.line("Paired via:   a pairing link for \(url)\(more.isEmpty ? "" : " (also \(more.joined(separator: ", ")))") (used when the config has no gateway.url)")
        }
        if let c = lastCheck {
            let minutes = max(0, (WallClock.milliseconds - c.atMs) / 60_000)
            Out.line("Last update:  checked \(minutes < 120 ? "\(minutes) min" : "\(minutes / 60) h") ago: \(c.result)")
        } else if config.autoUpdate.enabled {
            Out.line("Last update:  not checked yet (node.autoUpdate is on; openclaw-node-update.timer checks)")
        }
        if daemon["running"]?.boolValue == false {
            Out.line("Daemon:       not running (start it with `openclaw-node run`)")
        } else {
            Out.line("Daemon:       running, pid \(daemon["pid"]?.intValue ?? 0)")
            if let p = daemon["presence"]?.stringValue { Out.line("Presence:     \(p) (\(daemon["presenceReason"]?.stringValue ?? ""))") }
            if let c = daemon["connection"]?.stringValue { Out.line("Connection:   \(c)") }
            if let g = daemon["gateway"], g["state"] == "paused" || g["state"] == "pendingApproval" {
                if let r = g["requestId"]?.stringValue { Out.line("Request:      \(r) (approve: openclaw devices approve \(r))") }
                if let h = g["remediationHint"]?.stringValue { Out.line("Gateway says: \(h)") }
            }
            if let c = daemon["operatorConnection"]?.stringValue, c != "not used" { Out.line("Operator:     \(c)") }
            if let k = daemon["keepAwake"], let line = keepAwakeLine(k) { Out.line("Keep awake:   \(line)") }
            if let v = daemon["version"]?.stringValue { Out.line("Version:      \(v)") }
            if let r = daemon["restartPending"], r != .null {
                let waiting = r["waitingFor"]?.arrayValue?.compactMap(\.stringValue) ?? []
                Out.line("Restart:      pending (\(r["reason"]?.stringValue ?? "asked for"))\(waiting.isEmpty ? "" : "; waiting for \(waiting.joined(separator: ", "))")")
            }
            for (name, line) in (daemon["capabilityStatus"]?.objectValue ?? [:]).sorted(by: { $0.key < $1.key }) {
                guard let text = line.stringValue else { continue }
                let label = name.prefix(1).uppercased() + name.dropFirst() + ":"
                Out.line(label + String(repeating: " ", count: max(1, 14 - label.count)) + text)
            }
        }
        return ExitCode.ok.rawValue
    }

    /// "held (canvas window shown)", "wanted but not held: …", or nil when nothing asks for it.
    static func keepAwakeLine(_ k: JSONValue) -> String? {
        let reasons = k["reasons"]?.arrayValue?.compactMap(\.stringValue) ?? []
        guard !reasons.isEmpty else { return nil }
        let desktop = k["desktopInhibitor"]?.boolValue == true ? " and the desktop portal's idle inhibitor" : ""
        if k["held"]?.boolValue == true { return "held: logind's idle and sleep lock\(desktop) (\(reasons.joined(separator: ", ")))" }
        return "wanted (\(reasons.joined(separator: ", "))) but not held: \(k["failure"]?.stringValue ?? "taking it")"
    }
}
