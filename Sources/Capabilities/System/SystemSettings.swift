import Config
import Kit

/// `capabilities.system.*`, typed. The node's own ceiling on exec policy: the approvals document
/// can only make it stricter, never looser (and vice versa).
struct SystemSettings: Sendable {
    var security: ExecSecurity = .full
    var ask: ExecAsk = .off
    /// Globs over resolved binary paths that always need a fresh operator approval (a STOP-list).
    var denylist: [String] = []
    var sandbox = Sandbox()
    /// Path globs that allowlist entries written through the gateway must fall inside (nil: none
    /// set, and then no entry may cover every program).
    var allowlistCeiling: [String]? = nil
    /// Environment keys a request may set besides terminal and locale settings.
    var envAllow: Set<String> = []

    init() {}

    init(_ section: NodeConfig.CapabilitySection) {
        security = section.string("security").flatMap(ExecSecurity.init(rawValue:)) ?? .full
        ask = section.string("ask").flatMap(ExecAsk.init(rawValue:)) ?? .off
        denylist = section.settings["denylist"]?.arrayValue?.compactMap(\.stringValue) ?? []
        sandbox.kind = section.string("sandbox").flatMap(Sandbox.Kind.init(rawValue:)) ?? .none
        sandbox.writable = section.settings["sandboxWritable"]?.arrayValue?.compactMap(\.stringValue) ?? []
        sandbox.network = section.bool("sandboxNetwork") ?? true
        allowlistCeiling = section.settings["allowlistCeiling"]?.arrayValue?.compactMap(\.stringValue)
        envAllow = Set(section.settings["envAllow"]?.arrayValue?.compactMap(\.stringValue) ?? [])
    }

    static let configFields: [ConfigField] = [
        ConfigField("security", .enumeration(ExecSecurity.allCases.map(\.rawValue)), default: "\"full\"",
                    "the most this node allows: deny (nothing runs), allowlist (only what the approvals allowlist names), full"),
        ConfigField("ask", .enumeration(ExecAsk.allCases.map(\.rawValue)), default: "\"off\"",
                    "when an operator must approve: off, on-miss (allowlist misses), always"),
        ConfigField("denylist", .stringArray, default: "[]",
                    "binary path globs (\"/usr/bin/rm\", \"/usr/sbin/**\") that always need a fresh operator approval"),
        ConfigField("sandbox", .enumeration(Sandbox.Kind.allCases.map(\.rawValue)), default: "\"none\"",
                    "bwrap: run each command under bubblewrap (read-only system, private /tmp, only cwd and sandboxWritable writable)"),
        ConfigField("sandboxWritable", .stringArray, default: "[]", "absolute paths commands may write to besides their cwd (bwrap)"),
        ConfigField("sandboxNetwork", .bool, default: "true",
                    "false: commands get no network at all, nor Unix sockets (private /run, socket(AF_UNIX) refused) (bwrap)"),
        ConfigField("allowlistCeiling", .stringArray, default: "unset",
                    "path globs (\"/usr/bin/*\") that allowlist entries the gateway writes must fall inside; unset: any entry but one that allows every program"),
        ConfigField("envAllow", .stringArray, default: "[]",
                    "environment keys a request may set besides terminal and locale ones (TERM, LANG, LC_*, TZ, …)"),
    ]
}
