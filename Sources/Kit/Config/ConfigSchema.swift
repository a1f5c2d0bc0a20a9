import Support

/// The shape of config.json5: every key, its type, its default and what it means. Validation,
/// `config check` and the test that keeps config.json5 documenting every key all read this table.
public indirect enum ConfigType: Sendable, Equatable {
    case string
    case bool
    case integer(ClosedRange<Int>)
    /// Any JSON number in the range (a command's `quality`, 0..1 or 1..100).
    case number(ClosedRange<Double>)
    case enumeration([String])
    case stringArray
    /// A DNS domain name in text form ("openclaw.internal."; `\DDD` escapes allowed).
    case domainName
    /// "host" or "host:port" ("[v6]:port" for IPv6 with a port).
    case hostPort
    case object([ConfigField])
    /// An object whose keys are free (plugin ids) and whose values all have one shape.
    case map(ConfigType)
    /// An array whose items all have one shape.
    case list(ConfigType)
    /// Anything (a plugin's own config, passed through untouched).
    case any
    /// An object (`.object`) that must hold exactly one of `keys`: a choice between shapes (an MCP
    /// server is `command` for stdio or `url` for HTTP).
    case exactlyOne([String], of: ConfigType)

    /// An object's keys (through an `exactlyOne` rule); nil for other types.
    public var objectFields: [ConfigField]? {
        if case .object(let f) = shape { return f }
        return nil
    }

    /// An integer's or number's range, as numbers.
    public var numberRange: ClosedRange<Double>? {
        switch self {
        case .integer(let r): return Double(r.lowerBound)...Double(r.upperBound)
        case .number(let r): return r
        default: return nil
        }
    }

    /// A `number` (fractions allowed), not an `integer`.
    public var isNumber: Bool { if case .number = self { return true }; return false }

    /// The shape with any `exactlyOne` rule taken off (what the keys are).
    public var shape: ConfigType {
        if case .exactlyOne(_, let inner) = self { return inner.shape }
        return self
    }

    /// The type as documentation text ("integer 0..600", "one of auto, x11").
    public var description: String {
        switch self {
        case .string: return "string"
        case .bool: return "boolean"
        case .integer(let r): return "integer \(r.lowerBound)..\(r.upperBound)"
        case .number(let r): return "number \(NumberText.plain(r.lowerBound))..\(NumberText.plain(r.upperBound))"
        case .enumeration(let v): return "one of \(v.joined(separator: ", "))"
        case .stringArray: return "array of strings"
        case .domainName: return "domain name"
        case .hostPort: return "host or host:port"
        case .object(let f): return "object {\(f.map { "\($0.key): \($0.type.description)" }.joined(separator: ", "))}"
        case .map(let t): return "map of \(t.description)"
        case .list(let t): return "array of \(t.description)"
        case .any: return "any value"
        case .exactlyOne(let keys, let inner): return "\(inner.description) with exactly one of \(keys.joined(separator: ", "))"
        }
    }

    var noun: String {
        switch self {
        case .string, .enumeration: return "a string"
        case .domainName: return "a domain name (a string such as \"openclaw.internal.\")"
        case .hostPort: return "a string host or host:port"
        case .bool: return "a boolean (true or false)"
        case .integer: return "an integer"
        case .number: return "a number"
        case .stringArray: return "an array of strings"
        case .object, .map: return "an object"
        case .list: return "an array"
        case .any: return "any value"
        case .exactlyOne(_, let inner): return inner.noun
        }
    }
}

public struct ConfigField: Sendable, Equatable {
    public let key: String
    public let type: ConfigType
    /// The default, written as it would appear in config.json5 (documentation only).
    public let defaultText: String?
    /// The default as a value: filled into a bundle's section when the file leaves the key out, so
    /// the bundle reads no `?? default` of its own. nil when the default is not a constant
    /// ("$DISPLAY", "the first capture device").
    public let defaultValue: JSONValue?
    public let doc: String
    /// A config reload cannot apply a change of this key: it needs a restart of the node.
    public let restartsNode: Bool
    /// The key names a file that holds a secret (a VNC password file): the node hides it from
    /// every sandbox and every file command, like its own config (manifest `hidden: true`).
    public var hiddenFile = false
    /// A command param the caller must send (manifest `required: true`); config keys are never required.
    public var required = false
    /// A command's number param that is brought into its range instead of refused (manifest
    /// `clamp: true`: location.get's timeoutMs, as Android does it).
    public var clamps = false

    public init(_ key: String, _ type: ConfigType, default defaultText: String? = nil, _ doc: String) {
        self.key = key; self.type = type; self.defaultText = defaultText; self.defaultValue = nil; self.doc = doc
        self.restartsNode = false
    }

    /// A key with a constant default (documented as its JSON5 text unless `defaultDoc` says otherwise).
    public init(_ key: String, _ type: ConfigType, value: JSONValue?, defaultDoc: String? = nil, _ doc: String,
                restartsNode: Bool = false) {
        self.key = key; self.type = type; self.defaultValue = value; self.doc = doc; self.restartsNode = restartsNode
        self.defaultText = defaultDoc ?? value.map { $0.jsonString() }
    }
}

public enum ConfigSchema {
    /// The whole file's shape: the core's keys and one `capabilities.<name>` section per manifest.
    /// `refused`: bundles whose manifest could not be used: their sections are let through
    /// unchecked (the refusal is reported where the bundle is, not as an unknown key).
    public static func root(bundles: [BundleManifest], refused: [String] = []) -> [ConfigField] { [
        ConfigField("gateway", .object([
            ConfigField("url", .string, "gateway WebSocket URL (ws:// or wss://); unset = discovery. Env OPENCLAW_GATEWAY_URL wins"),
            ConfigField("name", .string, "with no url: connect to the discovered gateway with this DNS-SD instance name (or unambiguous display name)"),
            ConfigField("token", .string, "shared gateway token. Env OPENCLAW_GATEWAY_TOKEN wins"),
            ConfigField("password", .string, "shared gateway password. Env OPENCLAW_GATEWAY_PASSWORD wins"),
            ConfigField("setupCode", .string, "pairing link: a setup code from `openclaw qr`, oc-pair://<code>, or a one-time join URL https://<gateway>/j/<code> (carries url + bootstrap token; see `openclaw-node pair --help`)"),
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
            ConfigField("autoUpdate", .object([
                ConfigField("enabled", .bool, default: "false", "let the package's update timer (openclaw-node-update.timer) upgrade this package from its apt source and restart the node once nothing runs"),
                ConfigField("intervalHours", .integer(1...720), default: "24", "how often to check"),
                ConfigField("window", .string, default: "\"00:00-24:00\"", "local time of day when checks may run, \"HH:MM-HH:MM\" (may pass midnight: \"22:00-05:00\")"),
                ConfigField("source", .string, default: "\"/etc/apt/sources.list.d/openclaw-node.sources\"", "the apt source (deb822 .sources or one-line .list file) the package is upgraded from; no other source is read"),
            ]), "updates of the Debian package (off by default)"),
            ConfigField("releaseIdleLibrariesAfter", .integer(0...86_400), default: "600",
                        "seconds after their last use before the libraries loaded on demand (libswscale for scaled or converted images, libcamera) are unloaded to give their memory back (clips and recordings are encoded in a process of their own); loaded again on next use. 0 keeps them loaded"),
        ]), "this node"),
        ConfigField("presence", .object([
            ConfigField("mode", .enumeration(PresenceMode.allCases.map(\.rawValue)), default: "\"auto\"",
                        "auto (logind session) | x11 (screensaver) | wayland (compositor idle) | gnome (GNOME's idle monitor) | always | never | manual (openclaw-node presence …)"),
            ConfigField("display", .string, default: "$DISPLAY / $WAYLAND_DISPLAY", "X display for mode x11, Wayland compositor socket for mode wayland"),
            ConfigField("idleSeconds", .integer(1...86_400), default: "300", "modes wayland and gnome: background after this long without input"),
            ConfigField("keepAwake", .bool, default: "false", "hold logind's idle and sleep lock all the time the node runs (a kiosk); without it, only while the canvas window is shown, a desktop stream or a talk conversation runs"),
        ]), "when foreground-only commands (camera, screen, canvas) may run"),
        ConfigField("capabilities", .object(bundles.map { ConfigField($0.name, .object($0.section), $0.summary) }
                                            + refused.map { ConfigField($0, .any, "its bundle's manifest was refused") }),
                    "capability bundles (each described by its manifest); each can be switched off"),
        ConfigField("plugins", .object([
            ConfigField("dirs", .stringArray, default: "[\"Plugins\"]", "directories searched for out-of-process plugins"),
            ConfigField("entries", .map(.object([
                ConfigField("enabled", .bool, default: "true", "load this plugin"),
                ConfigField("config", .any, "passed to the plugin in its hello"),
            ])), default: "{}", "per-plugin settings, by plugin id"),
        ]), "out-of-process capability plugins"),
        ConfigField("skills", .object([
            ConfigField("enabled", .bool, default: "true", "publish the node-hosted skills to the gateway (node.skills.update); false sends nothing"),
            ConfigField("dirs", .stringArray, default: "[]", "more skill directories (absolute or ~/…), each holding <name>/SKILL.md, read after <stateDir>/skills"),
        ]), "node-hosted skills: <stateDir>/skills/<name>/SKILL.md and the directories named here"),
        ConfigField("metrics", .object([
            ConfigField("listen", .string, "where a Prometheus server scrapes GET /metrics: a loopback HOST:PORT (\"127.0.0.1:9851\", \"[::1]:9851\") or unix:/path (mode 0600, this account and root only); unset = no endpoint"),
            ConfigField("textfile", .string, "also write the same text to this file (atomically, removed when the node stops), for node_exporter's textfile collector: a path ending in .prom in its --collector.textfile.directory; unset = no file"),
            ConfigField("textfileIntervalSeconds", .integer(1...3600), default: "15", "how often the textfile is rewritten"),
        ]), "Prometheus metrics of this node: connection, invokes by command and outcome with durations, capabilities, presence, memory and descriptors (off unless listen or textfile is set)"),
    ] }

    /// Every key path in the schema ("gateway.discovery.lan", "plugins.entries.*.enabled", …).
    public static func allKeyPaths(bundles: [BundleManifest]) -> [String] {
        func walk(_ fields: [ConfigField], _ prefix: String) -> [String] {
            fields.flatMap { f -> [String] in
                let path = prefix.isEmpty ? f.key : "\(prefix).\(f.key)"
                switch f.type.shape {
                case .object(let sub): return [path] + walk(sub, path)
                case .map(let value):
                    if case .object(let sub) = value.shape { return [path] + walk(sub, "\(path).*") }
                    return [path]
                default: return [path]
                }
            }
        }
        return walk(root(bundles: bundles), "")
    }
}
