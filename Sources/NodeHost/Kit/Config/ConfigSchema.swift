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
        case .object, .map: return "an object"
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
            ConfigField("stateDir", .string, default: "\"~/.local/state/openclaw-node\"", "where the SQLite state (device key, tokens) and the control socket live"),
        ]), "this node"),
        ConfigField("presence", .object([
            ConfigField("mode", .enumeration(PresenceMode.allCases.map(\.rawValue)), default: "\"auto\"",
                        "auto (logind session) | x11 (screensaver) | always | never | manual (openclaw-node presence …)"),
            ConfigField("display", .string, default: "$DISPLAY", "X display for mode x11"),
        ]), "when foreground-only commands (camera, screen, canvas) may run"),
        ConfigField("capabilities", .object([
            ConfigField("device", .object([
                ConfigField("enabled", .bool, default: "true", "device.info and device.status"),
            ]), "device information"),
            ConfigField("camera", .object([
                ConfigField("enabled", .bool, default: "true", "camera.list, camera.snap, camera.clip"),
                ConfigField("device", .string, "default camera, e.g. \"/dev/video0\"; unset = the first capture device"),
            ]), "V4L2 cameras"),
            ConfigField("location", .object([
                ConfigField("enabled", .bool, default: "false", "location.get"),
                ConfigField("gpsd", .string, default: "\"127.0.0.1:2947\"", "gpsd host:port"),
                ConfigField("significantChangeMeters", .integer(0...1_000_000), default: "0",
                            "send a location.update node event after moving more than this many meters (0 = off)"),
                ConfigField("significantChangeMinIntervalMs", .integer(0...86_400_000), default: "60000",
                            "at most one location.update per this interval"),
            ]), "gpsd location"),
            ConfigField("screen", .object([
                ConfigField("enabled", .bool, default: "true", "screen.snapshot, screen.record"),
                ConfigField("backend", .enumeration(["auto", "x11", "fbdev"]), default: "\"auto\"", "capture backend"),
                ConfigField("display", .string, default: "$DISPLAY", "X display to capture"),
                ConfigField("fbdev", .string, default: "\"/dev/fb0\"", "framebuffer device"),
            ]), "screen capture"),
            ConfigField("canvas", .object([
                ConfigField("enabled", .bool, default: "true", "canvas.* and A2UI"),
                ConfigField("browser", .string, default: "first of chromium-headless-shell, chromium", "browser executable"),
                ConfigField("window", .bool, default: "false", "show a kiosk window instead of running headless"),
                ConfigField("display", .string, default: "$DISPLAY", "X display for the window"),
            ]), "web canvas (Chromium)"),
        ]), "capability bundles; each can be switched off"),
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
                default: return [path]
                }
            }
        }
        return walk(root, "")
    }
}
