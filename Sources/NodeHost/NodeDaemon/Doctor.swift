import Config
import ControlLink
import GatewaySession
import Glibc
import HostPresence
import Kit
import Plugins
import Registry
import Store
import Support
import Transport

/// What `openclaw-node doctor` checks, in one place: the config, the state database and its
/// permissions, every capability (each enabled one diagnoses itself), the plugins and the gateway
/// (reachable, TLS, pairing). The CLI only prints the result.
public enum Doctor {
    public struct Finding: Sendable {
        public enum Level: String, Sendable {
            case ok = "ok", warn = "warn", fail = "FAIL"
            init(_ l: Diagnosis.Level) {
                switch l { case .ok: self = .ok; case .warn: self = .warn; case .fail: self = .fail }
            }
        }
        public let level: Level
        public let area: String
        public let text: String
    }

    public struct Report: Sendable {
        public let findings: [Finding]
        /// What this node would advertise (nil when the config did not load).
        public let manifest: CommandRegistry.Manifest?
        /// The rows of the commands it would advertise (their gates and gateway policy).
        public var advertised: [CommandSpec] = []
        public var failed: Bool { findings.contains { $0.level == .fail } }
    }

    /// A config file (the main one or a drop-in) that holds the gateway token or password must be
    /// readable by its owner alone.
    static func secretsReadableByOthers(_ path: String?) -> [String] {
        guard let path else { return [] }
        return ConfigLoader.files(path).compactMap { file in
            guard let text = FileSystem.readText(file),
                  let v = try? JSON5Parser.parse(text, file: file).plain,
                  v["gateway"]?["token"]?.stringValue != nil || v["gateway"]?["password"]?.stringValue != nil,
                  let mode = PathName.permissions(file), mode & 0o044 != 0 else { return nil }
            return "\(file) holds the gateway's \(v["gateway"]?["token"] != nil ? "token" : "password") and is readable by " +
                "\(mode & 0o004 != 0 ? "every account" : "its group") (mode \(mode.octal())): run chmod 600 \(file), or pass it in OPENCLAW_GATEWAY_TOKEN"
        }
    }

    /// Whether the metrics outputs the config asks for can start (the daemon logs the same and runs on).
    static func metricsFindings(_ m: NodeConfig.Metrics) -> [Finding] {
        var out: [Finding] = []
        if let listen = m.listen {
            switch LocalServerAddress.parse(listen, server: "the metrics endpoint") {
            case .success(let a): out.append(.init(level: .ok, area: "metrics", text: "endpoint http \(a)/metrics"))
            case .failure(let why): out.append(.init(level: .fail, area: "metrics", text: "metrics.listen \(listen): \(why)"))
            }
        }
        if let file = m.textfile {
            let dir = PathName.directory(file)
            if !FileSystem.isDirectory(dir.isEmpty ? "." : dir) {
                out.append(.init(level: .fail, area: "metrics", text: "metrics.textfile \(file): the folder \(dir) does not exist (node_exporter's --collector.textfile.directory)"))
            } else if !file.hasSuffix(".prom") {
                out.append(.init(level: .warn, area: "metrics", text: "metrics.textfile \(file): node_exporter reads only *.prom files"))
            } else {
                out.append(.init(level: .ok, area: "metrics", text: "textfile \(file) every \(m.textfileInterval) s"))
            }
        }
        return out
    }

    /// Which keys each drop-in sets (the last file to set a key wins; `config show --origin` has
    /// every key's file and position).
    static func dropInFindings(_ path: String?) -> [Finding] {
        guard let path else { return [] }
        let dropIns = ConfigDropIns.files(for: path)
        guard !dropIns.isEmpty, let doc = try? ConfigLoader.document(path) else { return [] }
        let leaves = ConfigOrigin.leaves(of: doc)
        return dropIns.map { file in
            let keys = leaves.filter { $0.file == file }.map(\.keyPath)
            return Finding(level: .ok, area: "config",
                           text: "drop-in \(file) sets \(keys.isEmpty ? "nothing the later files do not override" : keys.joined(separator: ", "))")
        }
    }

    public static func check(configPath path: String?, capabilities: NodeRuntime.CapabilityFactory) async -> Report {
        var findings: [Finding] = []
        let config: NodeConfig
        do {
            config = try ConfigLoader.load(path: path)
            findings.append(.init(level: .ok, area: "config", text: path.map { "\($0) is valid" } ?? "no config file; using defaults"))
        } catch {
            findings.append(.init(level: .fail, area: "config", text: error.description))
            return Report(findings: findings, manifest: nil)
        }
        findings += dropInFindings(path)
        for why in secretsReadableByOthers(path) { findings.append(.init(level: .warn, area: "config", text: why)) }
        findings += stateFindings(config)
        findings += metricsFindings(config.metrics)
        findings += await presenceFindings(config)
        let loaded: [any Capability]
        do { loaded = try capabilities(config, NodeRuntime.presenceMonitor(config)) } catch {
            findings.append(.init(level: .fail, area: "config", text: error.description))
            return Report(findings: findings, manifest: nil)
        }
        let registry = await CommandRegistry.load(loaded, enabled: { config.isEnabled($0) })
        let installed = InstalledPackages.read()
        for e in registry.entries {
            let name = e.capability.name
            if !e.enabled { findings.append(.init(level: .ok, area: name, text: "disabled in config")); continue }
            switch e.availability {
            case .available: findings.append(.init(level: .ok, area: name, text: "available: \(e.commands.map(\.name).joined(separator: ", "))"))
            case .unavailable(let why) where e.capability is UnloadedCapability:
                // The installation is broken (bundle missing, damaged, refused): that needs fixing.
                findings.append(.init(level: .fail, area: name, text: "enabled but not usable: \(why)"))
            case .unavailable(let why):
                // This device lacks what it needs (no camera, no display): fine if expected.
                findings.append(.init(level: .warn, area: name,
                                      text: "enabled but not usable: \(why); if this device has none, set capabilities.\(name).enabled: false"))
            }
            findings += await (e.capability.selfDiagnosing?.diagnose() ?? []).map { Finding(level: Finding.Level($0.level), area: name, text: $0.text) }
            findings += packageFindings(e.capability.manifest, installed: installed)
            findings += programFindings(e.capability.manifest)
        }
        let plugins = registry.entries.compactMap { $0.capability as? PluginCapability }
        findings.append(.init(level: .ok, area: "plugins", text: plugins.isEmpty
            ? "none enabled (plugins.dirs: \(config.pluginDirs.joined(separator: ", ")); enable with plugins.entries.<id>.enabled)"
            : "enabled: \(plugins.map { "\($0.pluginManifest.id) \($0.pluginManifest.version)" }.joined(separator: ", "))"))
        // A manifest the installation has but that could not be used: its bundle is missing.
        for r in config.catalog.refused {
            findings.append(.init(level: .fail, area: "bundles", text: "\(r.reason); reinstall openclaw-node or remove \(r.file)"))
        }
        findings += skillFindings(config)
        findings += await gatewayFindings(config)
        findings += daemonConnectionFindings(config)
        let manifest = registry.manifest
        return Report(findings: findings, manifest: manifest,
                      advertised: registry.allSpecs.filter { manifest.commands.contains($0.name) })
    }

    /// What an enabled bundle uses when present (its manifest's `packages.recommends`) and this
    /// system lacks, with the command that installs it; nothing where dpkg cannot be asked.
    static func packageFindings(_ manifest: BundleManifest, installed: InstalledPackages?) -> [Finding] {
        guard let installed else { return [] }
        let wanted = manifest.packages.names("recommends", release: InstalledPackages.release)
        let missing = wanted.filter { !installed.satisfies($0) }
        guard !missing.isEmpty else {
            return wanted.isEmpty ? [] : [Finding(level: .ok, area: manifest.name, text: "packages it uses: \(wanted.joined(separator: ", ")) installed")]
        }
        let install = missing.map { String($0.split(separator: "|")[0]).trimmed() }
        return [Finding(level: .warn, area: manifest.name,
                        text: "uses \(missing.joined(separator: ", ")) when present, not installed: sudo apt install \(install.joined(separator: " "))")]
    }

    /// The programs an enabled bundle runs (its manifest's `programs`): where each is, and for the
    /// others what it is for and what installs it. A missing program the manifest calls optional
    /// (one of alternatives, a Raspberry Pi's camera programs, one that only improves a result) is
    /// said without a warning; a missing one that is not is a failure (a command cannot work).
    static func programFindings(_ manifest: BundleManifest, find: (String) -> String? = Self.findProgram) -> [Finding] {
        guard !manifest.programs.isEmpty else { return [] }
        var found: [String] = [], missing: [String] = [], broken = false
        for p in manifest.programs {
            if let path = find(p.name) { found.append(p.name.hasPrefix("/") ? p.name : "\(p.name) (\(path))"); continue }
            broken = broken || !p.optional
            let install = p.package.map { "sudo apt install \($0)" } ?? "from \(p.from ?? "elsewhere")"
            missing.append("\(p.name), for \(p.purpose) (\(install))")
        }
        var text = found.isEmpty ? "" : "programs: \(found.joined(separator: ", "))"
        if !missing.isEmpty { text += (text.isEmpty ? "" : "; ") + "missing: \(missing.joined(separator: "; "))" }
        return [Finding(level: broken ? .fail : .ok, area: manifest.name, text: text)]
    }

    /// A program's path: an absolute one as it is, a name as the bundles' tools are found
    /// (ToolProcess.find: PATH, then /usr/bin and /bin, which a service's trimmed PATH may lack).
    static func findProgram(_ name: String) -> String? {
        if name.hasPrefix("/") { return FileSystem.isExecutableFile(name) ? name : nil }
        return ToolProcess.find(name)
    }

    /// What presence.mode says now, and why: a mode whose helper library does not load is a
    /// broken installation (every foreground-only command would be refused).
    static func presenceFindings(_ config: NodeConfig) async -> [Finding] {
        let sample = await PresenceSources.make(config.presence).sample()
        let broken = sample.reason.contains("cannot load bundle") || sample.reason.contains("is not installed")
        return [.init(level: broken ? .fail : .ok, area: "presence",
                      text: "mode \(config.presence.mode.rawValue): \(sample.presence == .foreground ? "foreground" : "background") (\(sample.reason))")]
    }

    static func stateFindings(_ config: NodeConfig) -> [Finding] {
        let dbPath = config.stateDir + "/" + StateStore.fileName
        guard FileSystem.exists(dbPath) else {
            return [.init(level: .warn, area: "state", text: "\(dbPath) does not exist yet (created on first run)")]
        }
        var out: [Finding] = []
        func mode(_ p: String) -> Int { PathName.permissions(p) ?? 0 }
        let dirMode = mode(config.stateDir), fileMode = mode(dbPath)
        if dirMode & 0o077 != 0 { out.append(.init(level: .fail, area: "state", text: "\(config.stateDir) is mode \(dirMode.octal()); run chmod 700 \(config.stateDir)")) }
        if fileMode & 0o077 != 0 { out.append(.init(level: .fail, area: "state", text: "\(dbPath) is mode \(fileMode.octal()) (it holds the device key); run chmod 600 \(dbPath)")) }
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

    /// The running daemon's own view of its sessions: a paused reconnect is a failure with what
    /// the gateway said (request id, hint) and how to resume.
    static func daemonConnectionFindings(_ config: NodeConfig) -> [Finding] {
        guard let client = ControlClient.connect(stateDir: config.stateDir),
              let reply = try? client.request(["op": "status"]), let s = reply["status"] else { return [] }
        var out: [Finding] = []
        for (key, role) in [("gateway", "node"), ("operatorGateway", "operator")] {
            guard let g = s[key], let state = g["state"]?.stringValue else { continue }
            let who = role == "node" ? "the daemon" : "the daemon's operator session"
            switch state {
            case "paused":
                var text = "\(who) paused reconnecting: \(g["reason"]?.stringValue ?? "?")"
                if let r = g["requestId"]?.stringValue { text += "; request \(r): run `openclaw devices approve \(r)` on the gateway host" }
                if let h = g["remediationHint"]?.stringValue { text += "; the gateway says: \(h)" }
                text += "; it \(GatewayStatus.Pause.resumeHint)"
                out.append(.init(level: .fail, area: "gateway", text: text))
            case "pendingApproval":
                var text = "\(who) waits for approval\(g["requestId"]?.stringValue.map { " of request \($0) (openclaw devices approve \($0))" } ?? "")"
                if let h = g["remediationHint"]?.stringValue { text += "; the gateway says: \(h)" }
                out.append(.init(level: .warn, area: "gateway", text: text))
            case "connected" where role == "node":
                out.append(.init(level: .ok, area: "gateway", text: "\(who) is \(g["text"]?.stringValue ?? "connected")"))
            default:
                if role == "node" { out.append(.init(level: .warn, area: "gateway", text: "\(who): \(g["text"]?.stringValue ?? state)")) }
            }
        }
        return out
    }

    static func gatewayFindings(_ config: NodeConfig) async -> [Finding] {
        guard let text = config.gateway.url, let url = WebSocketURL(string: text) else {
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
        let host = url.host
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
            let level: Finding.Level
            switch g.pairingState {
            case .paired: level = .ok
            case .pending, .unknown: level = .warn
            case .rejected, .error: level = .fail
            }
            out.append(.init(level: level, area: "gateway", text: "pairing: \(g.pairingDescription)"))
        } else {
            out.append(.init(level: .warn, area: "gateway", text: "pairing: never connected yet (start `openclaw-node run`)"))
        }
        return out
    }
}
