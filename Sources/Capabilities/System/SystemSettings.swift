import Config
import Kit

/// `capabilities.system.*`, typed. The node's own ceiling on exec policy: the approvals document
/// can only make it stricter, never looser (and vice versa).
struct SystemSettings: Sendable {
    var security: ExecSecurity = .full
    var ask: ExecAsk = .off
    /// Globs over resolved binary paths that always need a fresh operator approval (a STOP-list).
    var denylist: [String] = []
    /// Whose approval counts: the gateway's (relayed for a plan this node issued; upstream's design)
    /// or only one made at the device with `openclaw-node approvals approve`.
    var approvals: ApprovalSource = .gateway
    enum ApprovalSource: String, Sendable { case gateway, device }
    var sandbox = Sandbox()
    /// Path globs that allowlist entries written through the gateway must fall inside (nil: none
    /// set, and then no entry may cover every program).
    var allowlistCeiling: [String]? = nil
    /// Environment keys a request may set besides terminal and locale settings.
    var envAllow: Set<String> = []
    /// Over a gateway, stream the output as progress while the command runs (off: upstream's
    /// hosts send system.run's output in the result only).
    var streamOutput = false

    init() {}

    init(_ section: BundleSection) {
        security = section.string("security").flatMap(ExecSecurity.init(rawValue:)) ?? .full
        ask = section.string("ask").flatMap(ExecAsk.init(rawValue:)) ?? .off
        denylist = section.settings["denylist"]?.arrayValue?.compactMap(\.stringValue) ?? []
        approvals = section.string("approvals").flatMap(ApprovalSource.init(rawValue:)) ?? .gateway
        sandbox.kind = section.string("sandbox").flatMap(Sandbox.Kind.init(rawValue:)) ?? .none
        sandbox.writable = section.settings["sandboxWritable"]?.arrayValue?.compactMap(\.stringValue) ?? []
        sandbox.network = section.bool("sandboxNetwork") ?? true
        allowlistCeiling = section.settings["allowlistCeiling"]?.arrayValue?.compactMap(\.stringValue)
        envAllow = Set(section.settings["envAllow"]?.arrayValue?.compactMap(\.stringValue) ?? [])
        streamOutput = section.bool("streamOutput") ?? false
    }
}
