import Glibc
import Support

/// The typed configuration the daemon runs with (config.json5 documents every key). Built from a validated JSON5
/// document plus environment overrides; every field has a default so an empty file is a valid config.
public struct NodeConfig: Sendable {
    public struct Gateway: Sendable {
        public var url: String?
        public var name: String?
        public var token: String?
        public var password: String?
        public var setupCode: String?
        public var tlsFingerprint: String?
        public var allowTOFU = true
        public var allowInsecure = false
        public var lanDiscovery = true
        public var wideAreaDomain: String?
        public var nameserver: String?
    }

    public struct Presence: Sendable {
        public var mode: PresenceMode = .auto
        public var display: String?
        /// Modes wayland and gnome: how long without input counts as nobody at the device.
        public var idleSeconds = 300
        /// presence.keepAwake: the idle and sleep lock for as long as the node runs.
        public var keepAwake = false
    }

    /// `node.autoUpdate.*`: the package's update timer (off by default).
    public struct AutoUpdate: Sendable, Equatable {
        public var enabled = false
        public var intervalHours = 24
        public var window = "00:00-24:00"
        public var source = "/etc/apt/sources.list.d/openclaw-node.sources"
    }

    /// `metrics.*`: the Prometheus endpoint and textfile (both off by default).
    public struct Metrics: Sendable, Equatable {
        public var listen: String?
        public var textfile: String?
        public var textfileInterval = 15
        public var isOn: Bool { listen != nil || textfile != nil }
    }

    /// One `capabilities.<name>` section (what a bundle is handed).
    public typealias CapabilitySection = BundleSection

    public struct PluginEntry: Sendable {
        public var enabled = true
        public var config: JSONValue = .object([:])
    }

    /// Node-hosted skills (`skills.*`): published with node.skills.update, reached by system.run.
    public struct Skills: Sendable, Equatable {
        public var enabled = true
        /// More directories of `<name>/SKILL.md` folders, `~` expanded; read after `<stateDir>/skills`.
        public var dirs: [String] = []
    }

    public var gateway = Gateway()
    public var displayName: String
    public var stateDir: String
    /// node.releaseIdleLibrariesAfter: how long FFmpeg's libraries stay loaded after their last
    /// use (a clip, a scaled image); nil (0 in the file) keeps them loaded.
    public var releaseIdleLibrariesAfter: Duration? = .seconds(600)
    public var presence = Presence()
    public var metrics = Metrics()
    public var autoUpdate = AutoUpdate()
    public var capabilities: [String: CapabilitySection] = [:]
    public var pluginDirs: [String] = ["Plugins"]
    public var pluginEntries: [String: PluginEntry] = [:]
    public var skills = Skills()
    /// The file this came from (nil = defaults only); relative plugin dirs resolve against its folder.
    public var sourceFile: String?

    /// The installed capabilities this config was read against (their manifests).
    public let catalog: BundleCatalog

    public init(environment: [String: String] = NodeSecrets.environment, catalog: BundleCatalog = .current) {
        displayName = "Linux Node (\(NodeConfig.hostname()))"
        stateDir = NodeConfig.defaultStateDir(environment)
        self.catalog = catalog
        for m in catalog.manifests {
            capabilities[m.name] = .filling([:], enabled: m.enabledByDefault, from: m.config)
        }
    }

    /// A capability's section. A name no manifest describes is a plugin's, switched on and off by
    /// its `plugins.entries` entry instead, so it counts as enabled here.
    public func capability(_ name: String) -> CapabilitySection {
        capabilities[name] ?? CapabilitySection(enabled: true, settings: [:])
    }

    public func isEnabled(_ capability: String) -> Bool { self.capability(capability).enabled }

    /// Builds the typed config from a document that already passed `ConfigValidator`.
    init(document v: JSONValue, sourceFile: String?, environment env: [String: String], catalog: BundleCatalog) {
        self.init(environment: env, catalog: catalog)
        self.sourceFile = sourceFile
        let g = v["gateway"]
        gateway.url = g?["url"]?.stringValue
        gateway.name = g?["name"]?.stringValue
        gateway.token = g?["token"]?.stringValue
        gateway.password = g?["password"]?.stringValue
        gateway.setupCode = g?["setupCode"]?.stringValue
        gateway.tlsFingerprint = g?["tlsFingerprint"]?.stringValue
        gateway.allowTOFU = g?["allowTOFU"]?.boolValue ?? true
        gateway.allowInsecure = g?["allowInsecure"]?.boolValue ?? false
        gateway.lanDiscovery = g?["discovery"]?["lan"]?.boolValue ?? true
        gateway.wideAreaDomain = g?["discovery"]?["wideAreaDomain"]?.stringValue
        gateway.nameserver = g?["discovery"]?["nameserver"]?.stringValue
        if let name = v["node"]?["displayName"]?.stringValue, !name.isEmpty { displayName = name }
        if let dir = v["node"]?["stateDir"]?.stringValue, !dir.isEmpty { stateDir = NodeConfig.expandHome(dir, env) }
        if let s = v["node"]?["releaseIdleLibrariesAfter"]?.intValue { releaseIdleLibrariesAfter = s > 0 ? .seconds(s) : nil }
        if let m = v["presence"]?["mode"]?.stringValue, let mode = PresenceMode(rawValue: m) { presence.mode = mode }
        presence.display = v["presence"]?["display"]?.stringValue
        if let idle = v["presence"]?["idleSeconds"]?.intValue, idle > 0 { presence.idleSeconds = idle }
        if let on = v["presence"]?["keepAwake"]?.boolValue { presence.keepAwake = on }
        if let u = v["node"]?["autoUpdate"] {
            if let on = u["enabled"]?.boolValue { autoUpdate.enabled = on }
            if let h = u["intervalHours"]?.intValue { autoUpdate.intervalHours = h }
            if let w = u["window"]?.stringValue { autoUpdate.window = w }
            if let src = u["source"]?.stringValue, !src.isEmpty { autoUpdate.source = src }
        }
        if let l = v["metrics"]?["listen"]?.stringValue, !l.isEmpty { metrics.listen = l }
        if let f = v["metrics"]?["textfile"]?.stringValue, !f.isEmpty { metrics.textfile = NodeConfig.expandHome(f, env) }
        if let n = v["metrics"]?["textfileIntervalSeconds"]?.intValue { metrics.textfileInterval = n }
        for m in catalog.manifests {
            var written = v["capabilities"]?[m.name]?.objectValue ?? [:]
            let enabled = written.removeValue(forKey: "enabled")?.boolValue ?? m.enabledByDefault
            capabilities[m.name] = .filling(written, enabled: enabled, from: m.config)
        }
        if let dirs = v["plugins"]?["dirs"]?.arrayValue { pluginDirs = dirs.compactMap(\.stringValue) }
        for (id, entry) in v["plugins"]?["entries"]?.objectValue ?? [:] {
            pluginEntries[id] = PluginEntry(enabled: entry["enabled"]?.boolValue ?? true,
                                            config: entry["config"] ?? .object([:]))
        }
        if let on = v["skills"]?["enabled"]?.boolValue { skills.enabled = on }
        if let dirs = v["skills"]?["dirs"]?.arrayValue { skills.dirs = dirs.compactMap(\.stringValue).map { NodeConfig.expandHome($0, env) } }
        applyEnvironment(env)
    }

    /// OpenClaw's own variable names override the file (and are how secrets stay out of it).
    mutating func applyEnvironment(_ env: [String: String]) {
        if let url = env["OPENCLAW_GATEWAY_URL"], !url.isEmpty { gateway.url = url }
        if let token = env["OPENCLAW_GATEWAY_TOKEN"], !token.isEmpty { gateway.token = token }
        if let pw = env["OPENCLAW_GATEWAY_PASSWORD"], !pw.isEmpty { gateway.password = pw }
        // The gateway and the Apple/Android clients read the same variable (docs/PROTOCOL.md §8.1);
        // unlike the others it is only a fallback: a domain in the config file wins.
        if gateway.wideAreaDomain == nil, let d = env["OPENCLAW_WIDE_AREA_DOMAIN"], !d.isEmpty { gateway.wideAreaDomain = d }
    }

    /// systemd's `StateDirectory=` (the package's unit: /var/lib/openclaw-node) first, then the
    /// XDG state directory of the daemon's user.
    static func defaultStateDir(_ env: [String: String]) -> String {
        if let sd = env["STATE_DIRECTORY"]?.split(separator: ":").first, sd.hasPrefix("/") { return String(sd) }
        if let xdg = env["XDG_STATE_HOME"], xdg.hasPrefix("/") { return xdg + "/openclaw-node" }
        return expandHome("~/.local/state/openclaw-node", env)
    }

    public static func expandHome(_ path: String, _ env: [String: String]) -> String {
        guard path == "~" || path.hasPrefix("~/") else { return path }
        let home = PathName.home(env)
        return home + path.dropFirst()
    }

    static func hostname() -> String { HostName.current }
}
