import Support

/// The shape of config.json5: every key, its type, its default and what it means. Validation,
/// `config check` and the test that keeps config.json5 documenting every key all read this table.
public indirect enum ConfigType: Sendable {
    case string
    case bool
    case integer(ClosedRange<Int>)
    case enumeration([String])
    case stringArray
    /// A DNS domain name in text form ("openclaw.internal."; `\DDD` escapes allowed).
    case domainName
    /// "host" or "host:port" ("[v6]:port" for IPv6 with a port).
    case hostPort
    case object([ConfigField])
    /// An object whose keys are free (plugin ids) and whose values all have one shape.
    case map(ConfigType)
    /// A capability's section: these keys are checked with the rest of the file; the others belong
    /// to the capability's bundle, which declares them (`BundleExports.configFields`) and has them
    /// checked when it loads (and by `config check`).
    case section([ConfigField])
    /// Anything (a plugin's own config, passed through untouched).
    case any

    var noun: String {
        switch self {
        case .string, .enumeration: return "a string"
        case .domainName: return "a domain name (a string such as \"openclaw.internal.\")"
        case .hostPort: return "a string host or host:port"
        case .bool: return "a boolean (true or false)"
        case .integer: return "an integer"
        case .stringArray: return "an array of strings"
        case .object, .map, .section: return "an object"
        case .any: return "any value"
        }
    }
}

public struct ConfigField: Sendable {
    public let key: String
    public let type: ConfigType
    /// The default, written as it would appear in config.json5 (documentation only).
    public let defaultText: String?
    public let doc: String

    public init(_ key: String, _ type: ConfigType, default defaultText: String? = nil, _ doc: String) {
        self.key = key; self.type = type; self.defaultText = defaultText; self.doc = doc
    }
}

public enum ConfigSchema {
    public static let root: [ConfigField] = [
        ConfigField("gateway", .object([
            ConfigField("url", .string, "gateway WebSocket URL (ws:// or wss://); unset = discovery. Env OPENCLAW_GATEWAY_URL wins"),
            ConfigField("name", .string, "with no url: connect to the discovered gateway with this DNS-SD instance name (or unambiguous display name)"),
            ConfigField("token", .string, "shared gateway token. Env OPENCLAW_GATEWAY_TOKEN wins"),
            ConfigField("password", .string, "shared gateway password. Env OPENCLAW_GATEWAY_PASSWORD wins"),
            ConfigField("setupCode", .string, "setup code from `openclaw qr` (carries url + bootstrap token)"),
            ConfigField("tlsFingerprint", .string, "expected SHA-256 of the gateway's leaf certificate (\"sha256:ab12…\")"),
            ConfigField("allowTOFU", .bool, default: "true", "pin the certificate seen on the first wss:// connect when no fingerprint is set"),
            ConfigField("allowInsecure", .bool, default: "false", "allow plain ws:// to a public address"),
            ConfigField("discovery", .object([
                ConfigField("lan", .bool, default: "true", "browse _openclaw-gw._tcp in local. through avahi-daemon (needs the D-Bus system bus)"),
                ConfigField("wideAreaDomain", .domainName, "unicast DNS-SD domain to query, e.g. \"openclaw.internal.\". Env OPENCLAW_WIDE_AREA_DOMAIN is the fallback"),
                ConfigField("nameserver", .hostPort, "DNS server for wide-area queries (host or host:port, default port 53); default: the system resolver"),
            ]), "how to find a gateway when gateway.url is not set"),
        ]), "the OpenClaw gateway to pair with"),
        ConfigField("node", .object([
            ConfigField("displayName", .string, default: "\"Linux Node (<hostname>)\"", "name shown in `openclaw nodes list`"),
            ConfigField("stateDir", .string, default: "\"~/.local/state/openclaw-node\"", "where the SQLite state (device key, tokens) and the control socket live; under systemd's StateDirectory= (the package's unit) $STATE_DIRECTORY"),
        ]), "this node"),
        ConfigField("presence", .object([
            ConfigField("mode", .enumeration(PresenceMode.allCases.map(\.rawValue)), default: "\"auto\"",
                        "auto (logind session) | x11 (screensaver) | wayland (compositor idle) | always | never | manual (openclaw-node presence …)"),
            ConfigField("display", .string, default: "$DISPLAY / $WAYLAND_DISPLAY", "X display for mode x11, Wayland compositor socket for mode wayland"),
            ConfigField("idleSeconds", .integer(1...86_400), default: "300", "mode wayland: background after this long without input"),
        ]), "when foreground-only commands (camera, screen, canvas) may run"),
        ConfigField("capabilities", .object(NodeConfig.knownCapabilities.map { c in
            let enabled = ConfigField("enabled", .bool, default: c.enabledByDefault ? "true" : "false", c.commands)
            // device is built in; every other section's keys come from its bundle.
            return ConfigField(c.name, c.name == "device" ? .object([enabled]) : .section([enabled]), c.summary)
        }), "capability bundles; each can be switched off"),
        ConfigField("plugins", .object([
            ConfigField("dirs", .stringArray, default: "[\"Plugins\"]", "directories searched for out-of-process plugins"),
            ConfigField("entries", .map(.object([
                ConfigField("enabled", .bool, default: "true", "load this plugin"),
                ConfigField("config", .any, "passed to the plugin in its hello"),
            ])), default: "{}", "per-plugin settings, by plugin id"),
        ]), "out-of-process capability plugins"),
    ]

    /// Every key path in the schema ("gateway.discovery.lan", "plugins.entries.*.enabled", …).
    public static var allKeyPaths: [String] {
        func walk(_ fields: [ConfigField], _ prefix: String) -> [String] {
            fields.flatMap { f -> [String] in
                let path = prefix.isEmpty ? f.key : "\(prefix).\(f.key)"
                switch f.type {
                case .object(let sub): return [path] + walk(sub, path)
                case .map(.object(let sub)): return [path] + walk(sub, "\(path).*")
                case .section(let sub): return [path] + walk(sub, path)
                default: return [path]
                }
            }
        }
        return walk(root, "")
    }
}
