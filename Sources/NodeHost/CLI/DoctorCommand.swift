import Foundation

/// `openclaw-node doctor`: checks config, state, each enabled capability's prerequisites and the
/// gateway, and prints the gateway allowlist snippet. Exit 0 when nothing is wrong, 1 otherwise.
enum DoctorCommand {
    static let help = """
        Usage: openclaw-node doctor [--json] [--config FILE]

        Checks the config, the state database and its permissions, every enabled capability, and
        the gateway (reachable, TLS, pairing), and prints the gateway config snippet that allows
        this node's commands. Exit code 0 when everything is fine, 1 when something is wrong.
        """

    struct Finding {
        enum Level: String { case ok = "ok", warn = "warn", fail = "FAIL" }
        let level: Level
        let area: String
        let text: String
    }

    static func main(_ args: [String], capabilities: CLI.CapabilityFactory) async throws -> Int32 {
        let a = try Arguments(args, valued: ["config"], known: ["json"])
        if a.flag("help") { Out.line(help); return ExitCode.ok.rawValue }
        var findings: [Finding] = []
        let path = ConfigLoader.resolvePath(explicit: a.option("config"))
        let config: NodeConfig
        do {
            config = try ConfigLoader.load(path: path)
            findings.append(.init(level: .ok, area: "config", text: path.map { "\($0) is valid" } ?? "no config file; using defaults"))
        } catch {
            findings.append(.init(level: .fail, area: "config", text: error.description))
            return report(findings, snippet: nil, json: a.flag("json"))
        }
        findings += stateFindings(config)
        let registry = await CommandRegistry.load(capabilities(config), enabled: { config.isEnabled($0) })
        for e in registry.entries {
            let name = e.capability.name
            if !e.enabled { findings.append(.init(level: .ok, area: name, text: "disabled in config")); continue }
            switch e.availability {
            case .available: findings.append(.init(level: .ok, area: name, text: "available: \(e.capability.commands.map(\.name).joined(separator: ", "))"))
            case .unavailable(let why): findings.append(.init(level: .fail, area: name, text: "enabled but not usable: \(why)"))
            }
            findings += prerequisites(name, config)
        }
        let plugins = registry.entries.compactMap { $0.capability as? PluginCapability }
        findings.append(.init(level: .ok, area: "plugins", text: plugins.isEmpty
            ? "none enabled (plugins.dirs: \(config.pluginDirs.joined(separator: ", ")); enable with plugins.entries.<id>.enabled)"
            : "enabled: \(plugins.map { "\($0.manifest.id) \($0.manifest.version)" }.joined(separator: ", "))"))
        findings += await gatewayFindings(config)
        return report(findings, snippet: GatewayAllowlist.snippet(registry.manifest), json: a.flag("json"),
                      filtered: GatewayAllowlist.filtered(registry.manifest))
    }

    static func stateFindings(_ config: NodeConfig) -> [Finding] {
        let dbPath = config.stateDir + "/" + StateStore.fileName
        guard FileManager.default.fileExists(atPath: dbPath) else {
            return [.init(level: .warn, area: "state", text: "\(dbPath) does not exist yet (created on first run)")]
        }
        var out: [Finding] = []
        func mode(_ p: String) -> Int { ((try? FileManager.default.attributesOfItem(atPath: p))?[.posixPermissions] as? NSNumber)?.intValue ?? 0 }
        let dirMode = mode(config.stateDir), fileMode = mode(dbPath)
        if dirMode & 0o077 != 0 { out.append(.init(level: .fail, area: "state", text: String(format: "%@ is mode %04o; run chmod 700 %@", config.stateDir, dirMode, config.stateDir))) }
        if fileMode & 0o077 != 0 { out.append(.init(level: .fail, area: "state", text: String(format: "%@ is mode %04o (it holds the device key); run chmod 600 %@", dbPath, fileMode, dbPath))) }
        do {
            let store = try StateStore(stateDir: config.stateDir)
            if let aside = store.movedAside { out.append(.init(level: .fail, area: "state", text: "the state database was damaged and moved to \(aside)")) }
            let id = try store.identity()
            out.append(.init(level: .ok, area: "state", text: "\(dbPath) (schema \(try store.schemaVersion())), device \(id.deviceId)"))
        } catch {
            out.append(.init(level: .fail, area: "state", text: error.description))
        }
        return out
    }

    /// Checks beyond the capability's own availability: things it assumes at run time.
    static func prerequisites(_ name: String, _ config: NodeConfig) -> [Finding] {
        switch name {
        case "location":
            let target = config.capability("location").string("gpsd") ?? "127.0.0.1:2947"
            let parts = target.split(separator: ":")
            let host = parts.count > 1 ? parts.dropLast().joined(separator: ":") : target
            let port = parts.count > 1 ? Int(parts.last!) ?? 2947 : 2947
            if let addrs = try? TCPSocket.resolve(host: host, port: port), (try? TCPSocket.connect(addrs, timeout: .seconds(2))) != nil {
                return [.init(level: .ok, area: name, text: "gpsd answers at \(host):\(port)")]
            }
            return [.init(level: .fail, area: name, text: "gpsd is not reachable at \(host):\(port) (sudo systemctl start gpsd, or set capabilities.location.gpsd)")]
        case "camera":
            let devices = ((try? FileManager.default.contentsOfDirectory(atPath: "/dev")) ?? []).filter { $0.hasPrefix("video") }
            if devices.isEmpty { return [.init(level: .warn, area: name, text: "no /dev/video* device")] }
            if let unreadable = devices.first(where: { access("/dev/\($0)", R_OK | W_OK) != 0 }) {
                return [.init(level: .fail, area: name, text: "no access to /dev/\(unreadable): add this user to the video group (sudo usermod -aG video $USER) and log in again")]
            }
            return [.init(level: .ok, area: name, text: "devices: \(devices.map { "/dev/\($0)" }.joined(separator: ", "))")]
        case "canvas":
            // The capability's availability already says which browser (or what to install);
            // what it cannot see is a window mode with no display to open.
            let c = config.capability("canvas")
            guard c.bool("window") == true else { return [] }
            let display = c.string("display") ?? ProcessInfo.processInfo.environment["DISPLAY"]
            guard let display, !display.isEmpty else {
                return [.init(level: .fail, area: name, text: "window: true but no X display (set capabilities.canvas.display, e.g. \":0\")")]
            }
            return [.init(level: .ok, area: name, text: "kiosk window on display \(display)")]
        default:
            return []
        }
    }

    static func gatewayFindings(_ config: NodeConfig) async -> [Finding] {
        guard let text = config.gateway.url, let url = URL(string: text), let host = url.host else {
            if config.gateway.setupCode != nil { return [.init(level: .ok, area: "gateway", text: "a setup code is configured")] }
            var paths: [String] = []
            if config.gateway.lanDiscovery { paths.append("LAN (avahi)") }
            if let d = config.gateway.wideAreaDomain { paths.append("wide-area DNS-SD in \(d)") }
            if paths.isEmpty {
                return [.init(level: .warn, area: "gateway", text: "no gateway.url, no setup code and discovery is off: the node only serves local invokes")]
            }
            return [.init(level: .ok, area: "gateway", text: "no gateway.url: `run` looks for one via \(paths.joined(separator: " and "))\(config.gateway.name.map { " named \"\($0)\"" } ?? ""); `openclaw-node discover` shows what it finds")]
        }
        var out: [Finding] = []
        let secure = url.scheme == "wss"
        let port = url.port ?? (secure ? 443 : 80)
        guard let addrs = try? TCPSocket.resolve(host: host, port: port) else {
            return [.init(level: .fail, area: "gateway", text: "cannot resolve \(host)")]
        }
        if !secure && !config.gateway.allowInsecure && !addrs.allSatisfy(\.isLoopbackOrPrivate) {
            out.append(.init(level: .fail, area: "gateway", text: "plain ws:// to a public address will be refused: use wss:// or set gateway.allowInsecure"))
        }
        guard let tcp = try? TCPSocket.connect(addrs, timeout: .seconds(3)) else {
            return out + [.init(level: .fail, area: "gateway", text: "\(host):\(port) is not reachable (is `openclaw gateway` running, and bound to this network?)")]
        }
        if secure {
            do {
                let tls = try TLSStream(tcp: tcp, host: host, timeout: .seconds(5))
                let peer = tls.peerInfo()
                tls.close()
                if let pin = config.gateway.tlsFingerprint, TLSPolicy.normalizeFingerprint(pin) != peer?.fingerprint {
                    out.append(.init(level: .fail, area: "gateway", text: "certificate sha256:\(peer?.fingerprint ?? "?") does not match gateway.tlsFingerprint"))
                } else if let why = peer?.verifyError, config.gateway.tlsFingerprint == nil {
                    out.append(.init(level: config.gateway.allowTOFU ? .warn : .fail, area: "gateway",
                                     text: "certificate not trusted by the system (\(why)); \(config.gateway.allowTOFU ? "it will be pinned on first use" : "set gateway.tlsFingerprint")"))
                } else {
                    out.append(.init(level: .ok, area: "gateway", text: "TLS ok (sha256:\(peer?.fingerprint ?? "?"))"))
                }
            } catch {
                out.append(.init(level: .fail, area: "gateway", text: "TLS: \(error.description)"))
            }
        } else {
            tcp.close()
        }
        out.append(.init(level: .ok, area: "gateway", text: "\(host):\(port) is reachable"))
        if let store = try? StateStore(stateDir: config.stateDir), let records = try? store.gateways(),
           let g = records.first(where: { $0.url == text }) ?? records.first {
            let level: Finding.Level = g.pairingState == "paired" ? .ok : (g.pairingState == "pending" ? .warn : .fail)
            out.append(.init(level: g.pairingState == "unknown" ? .warn : level, area: "gateway", text: "pairing: \(PairingText.describe(g))"))
        } else {
            out.append(.init(level: .warn, area: "gateway", text: "pairing: never connected yet (start `openclaw-node run`)"))
        }
        return out
    }

    static func report(_ findings: [Finding], snippet: String?, json: Bool, filtered: [String] = []) -> Int32 {
        let failed = findings.contains { $0.level == .fail }
        if json {
            var o: [String: JSONValue] = [
                "ok": .bool(!failed),
                "findings": .array(findings.map { ["level": .string($0.level.rawValue), "area": .string($0.area), "text": .string($0.text)] }),
                "allowCommands": .array(filtered.map { .string($0) }),
            ]
            if let snippet { o["allowlistSnippet"] = .string(snippet) }
            Out.json(.object(o))
        } else {
            for f in findings { Out.line("[\(f.level.rawValue.padding(toLength: 4, withPad: " ", startingAt: 0))] \(f.area): \(f.text)") }
            if let snippet, !filtered.isEmpty {
                Out.line("\nMost node commands are not in a Linux gateway's default allowlist. Add them on the gateway:")
                Out.line(snippet)
            }
            Out.line(failed ? "\nSomething needs attention (see FAIL above)." : "\nAll checks passed.")
        }
        return failed ? ExitCode.failure.rawValue : ExitCode.ok.rawValue
    }
}
