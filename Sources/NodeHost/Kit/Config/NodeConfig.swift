import FoundationEssentials
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
        /// Mode wayland: how long without input counts as nobody at the device.
        public var idleSeconds = 300
    }

    /// One `capabilities.<name>` section: the enabled flag plus the capability's own keys.
    public struct CapabilitySection: Sendable {
        public var enabled: Bool
        public var settings: [String: JSONValue]
        /// The section as written (with source locations), for checking the keys its bundle declares.
        public var node: JSON5Node? = nil
        public func string(_ key: String) -> String? { settings[key]?.stringValue }
        public func bool(_ key: String) -> Bool? { settings[key]?.boolValue }
    }

    public struct PluginEntry: Sendable {
        public var enabled = true
        public var config: JSONValue = .object([:])
    }

    public var gateway = Gateway()
    public var displayName: String
    public var stateDir: String
    public var presence = Presence()
    public var capabilities: [String: CapabilitySection] = [:]
    public var pluginDirs: [String] = ["Plugins"]
    public var pluginEntries: [String: PluginEntry] = [:]
    /// The file this came from (nil = defaults only); relative plugin dirs resolve against its folder.
    public var sourceFile: String?

    /// The `capabilities.<name>` sections, in manifest order, and whether each is on unless the
    /// config says otherwise. All but device (built in) are bundles.
    public static let knownCapabilities: [(name: String, enabledByDefault: Bool, commands: String, summary: String)] = [
        ("device", true, "device.info and device.status", "device information (built in)"),
        ("camera", true, "camera.list, camera.snap, camera.clip", "V4L2 cameras (libopenclaw-camera.so)"),
        ("location", false, "location.get", "gpsd location (libopenclaw-location.so)"),
        ("screen", true, "screen.snapshot, screen.record", "screen capture (libopenclaw-screen.so)"),
        ("canvas", true, "canvas.* and A2UI", "web canvas, Chromium (libopenclaw-canvas.so)"),
        ("computer", false, "computer.act, device.apps, device.apps.launch",
         "desktop input at screenshot coordinates (X11 XTest) and the desktop's applications (libopenclaw-computer.so)"),
        ("talk", false, "talk.ptt.start, talk.ptt.stop, talk.ptt.cancel, talk.ptt.once",
         "push-to-talk with on-device speech recognition (libopenclaw-talk.so)"),
        ("system", false, "system.run, system.run.prepare, system.which, system.execApprovals.get/set",
         "run commands under exec approvals (libopenclaw-system.so)"),
    ]
    static let enabledByDefault = Dictionary(knownCapabilities.map { ($0.name, $0.enabledByDefault) }, uniquingKeysWith: { a, _ in a })

    /// The capabilities loaded from bundles (libopenclaw-<name>.so), in manifest order.
    public var bundledCapabilityNames: [String] { NodeConfig.knownCapabilities.map(\.name).filter { $0 != "device" } }

    public init(environment: [String: String] = NodeSecrets.environment) {
        displayName = "Linux Node (\(NodeConfig.hostname()))"
        stateDir = NodeConfig.defaultStateDir(environment)
        for (name, on) in NodeConfig.enabledByDefault { capabilities[name] = CapabilitySection(enabled: on, settings: [:]) }
    }

    public func capability(_ name: String) -> CapabilitySection {
        capabilities[name] ?? CapabilitySection(enabled: NodeConfig.enabledByDefault[name] ?? true, settings: [:])
    }

    public func isEnabled(_ capability: String) -> Bool { self.capability(capability).enabled }

    /// Builds the typed config from a document that already passed `ConfigValidator`.
    init(document v: JSONValue, sourceFile: String?, environment env: [String: String], sectionNodes: [String: JSON5Node] = [:]) {
        self.init(environment: env)
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
        if let m = v["presence"]?["mode"]?.stringValue, let mode = PresenceMode(rawValue: m) { presence.mode = mode }
        presence.display = v["presence"]?["display"]?.stringValue
        if let idle = v["presence"]?["idleSeconds"]?.intValue, idle > 0 { presence.idleSeconds = idle }
        for (name, section) in v["capabilities"]?.objectValue ?? [:] {
            var settings = section.objectValue ?? [:]
            let enabled = settings.removeValue(forKey: "enabled")?.boolValue ?? NodeConfig.enabledByDefault[name] ?? true
            capabilities[name] = CapabilitySection(enabled: enabled, settings: settings, node: sectionNodes[name])
        }
        if let dirs = v["plugins"]?["dirs"]?.arrayValue { pluginDirs = dirs.compactMap(\.stringValue) }
        for (id, entry) in v["plugins"]?["entries"]?.objectValue ?? [:] {
            pluginEntries[id] = PluginEntry(enabled: entry["enabled"]?.boolValue ?? true,
                                            config: entry["config"] ?? .object([:]))
        }
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

    static func hostname() -> String {
        var buf = [CChar](repeating: 0, count: 256)
        gethostname(&buf, buf.count - 1)
        return String(cBuffer: buf)
    }
}

extension NodeConfig {
    /// Problems in `capabilities.<name>` against the keys its bundle declares (every key but
    /// `enabled`, which the core checks with the rest of the file): unknown keys with a "did you
    /// mean", wrong types, out-of-range values — file:line:col and key path, as for the rest.
    public func sectionErrors(_ name: String, fields: [ConfigField]) -> [ConfigError] {
        guard let node = capability(name).node, case .object(let members) = node.kind else { return [] }
        let all = [ConfigField("enabled", .bool, "")] + fields
        let object = JSON5Node(.object(members.filter { $0.key != "enabled" }), at: node.location)
        return ConfigValidator.check(object, against: .object(all), path: "capabilities.\(name)", file: sourceFile ?? "config")
    }
}
