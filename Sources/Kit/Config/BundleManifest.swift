
/// What a capability bundle says about itself, read from the JSON5 file beside its library
/// (`libopenclaw-<name>.manifest.json5`) without opening the library. It is the one place a
/// capability's name, config section, command rows and gates, Debian packages, doctor checks and
/// CLI commands are written down: the config check, `config.json5`'s documentation, `caps`,
/// `--help`, the man page, completion, doctor, the gateway allowlist snippet, the connect manifest
/// and the answer for a disabled bundle's commands are all derived from it
/// (docs/ARCHITECTURE.md "Adding a capability").
public struct BundleManifest: Sendable {
    /// One command row. Its handler is in the bundle's code, bound by name when the bundle loads;
    /// a bundle whose code and manifest disagree is refused.
    public struct Command: Sendable, Equatable {
        public let name: String
        public let summary: String
        /// The params, in manifest order: their types, ranges, defaults and meaning. The host checks
        /// an invoke's params against them and fills in the defaults before the handler runs, and
        /// `caps`, `--help`, the man page and the docs print them.
        public let params: [ConfigField]
        /// Refused with NODE_BACKGROUND_UNAVAILABLE while nobody is at the device.
        public let requiresForeground: Bool
        /// In the gateway's dangerous set: needs an explicit gateway allow entry.
        public let dangerous: Bool
        /// The `permissions` key of the connect frame this command needs (e.g. "camera").
        public let permission: String?
        /// What a gateway of 2026.7.2 or later does with it on platform linux.
        public let gateway: GatewayPolicy
        /// What an older gateway (`gateway.nodes.allowCommands`) does with it.
        public let olderGateway: GatewayPolicy
        /// A long-running command that streams progress and takes input while it runs (a duplex
        /// invoke): the node keeps it alive with heartbeats while it is quiet.
        public let duplex: Bool
        /// Its result goes to the gateway as a structured `payload` object rather than as
        /// `payloadJSON` text (upstream's contract for mcp.tools.call.v1).
        public let structuredResult: Bool

        public init(name: String, summary: String, params: [ConfigField] = [], requiresForeground: Bool = false,
                    dangerous: Bool = false, permission: String? = nil, gateway: GatewayPolicy = .allowlist,
                    olderGateway: GatewayPolicy = .allowlist, duplex: Bool = false, structuredResult: Bool = false) {
            self.name = name; self.summary = summary; self.params = params
            self.requiresForeground = requiresForeground; self.dangerous = dangerous; self.permission = permission
            self.gateway = gateway; self.olderGateway = olderGateway; self.duplex = duplex
            self.structuredResult = structuredResult
        }
    }

    /// How a gateway's command policy treats a command of a Linux node (docs/PROTOCOL.md §5).
    public enum GatewayPolicy: String, Sendable, CaseIterable {
        /// In the platform defaults for linux (or allowed for a node with the command's cap).
        case `default`
        /// Allowed on every platform by the gateway's Canvas plugin when it is enabled.
        case canvasPlugin = "canvas-plugin"
        /// A desktop-host command: allowed once an operator approves the node's command surface.
        case surfaceApproval = "surface-approval"
        /// Only with the gateway's allowlist.
        case allowlist
    }

    /// One check `openclaw-node doctor` runs for the bundle (`Capability.diagnose`), documented here.
    public struct DoctorCheck: Sendable, Equatable {
        public let id: String
        public let doc: String
    }

    /// A program the bundle runs as a child process: doctor says which are installed and what
    /// installs the others.
    public struct Program: Sendable, Equatable {
        /// What is looked up on PATH, or an absolute path the bundle runs as is.
        public let name: String
        /// The Debian package that ships it; nil when it comes from elsewhere (`from`).
        public let package: String?
        /// Where it comes from when no Debian package ships it ("Raspberry Pi OS's rpicam-apps").
        public let from: String?
        /// What the bundle runs it for (one phrase: "desktop.stream on an X display").
        public let purpose: String
        /// Only some devices need it, or it only improves a result (one of alternatives, a
        /// Raspberry Pi's camera programs, a sandbox the config may ask for, file(1)): doctor
        /// mentions it missing without failing.
        public let optional: Bool

        public init(name: String, package: String?, from: String?, purpose: String, optional: Bool = false) {
            self.name = name; self.package = package; self.from = from; self.purpose = purpose; self.optional = optional
        }
    }

    /// A subcommand of `openclaw-node` the bundle serves (`openclaw-node approvals …`).
    public struct CLICommand: Sendable, Equatable {
        public let name: String
        public let summary: String
        public let help: String
    }

    public let name: String
    public let summary: String
    public let enabledByDefault: Bool
    /// The library with the bundle's code; nil for the core's built-in capability.
    public let library: String?
    /// The keys of `capabilities.<name>` besides `enabled`, in documentation order.
    public let config: [ConfigField]
    public let commands: [Command]
    /// Debian packages it needs, by kind (PackageNeeds).
    public let packages: PackageNeeds
    /// Debian packages the bundle's libraries come from (what to install when it cannot load).
    public var depends: [String] { packages.names("depends") }
    public var recommends: [String] { packages.names("recommends") }
    /// The programs it runs, in manifest order.
    public let programs: [Program]
    public let doctor: [DoctorCheck]
    public let cli: [CLICommand]
    /// Where it was read ("built in" for the core's own).
    public let file: String

    public init(name: String, summary: String, enabledByDefault: Bool, library: String?, config: [ConfigField] = [],
                commands: [Command], packages: PackageNeeds = PackageNeeds(), programs: [Program] = [],
                doctor: [DoctorCheck] = [], cli: [CLICommand] = [], file: String) {
        self.name = name; self.summary = summary; self.enabledByDefault = enabledByDefault; self.library = library
        self.config = config; self.commands = commands; self.packages = packages; self.programs = programs
        self.doctor = doctor; self.cli = cli; self.file = file
    }

    /// The manifest file that belongs beside `libopenclaw-<name>.so`.
    public static func fileName(_ name: String) -> String { "libopenclaw-\(name).manifest.json5" }

    /// The whole `capabilities.<name>` section: `enabled` and the bundle's keys.
    public var section: [ConfigField] {
        [ConfigField("enabled", .bool, value: .bool(enabledByDefault), commands.map(\.name).joined(separator: ", "))] + config
    }

    /// Keys of the section that a config reload cannot apply (only a restart does).
    public var restartKeys: [String] { config.filter(\.restartsNode).map(\.key) }
}

extension Array where Element == BundleManifest {
    public func named(_ name: String) -> BundleManifest? { first { $0.name == name } }
}

extension BundleManifest.Command {
    /// Each param and its description in words, for `caps`, `--help`, the man page and the docs
    /// ("maxWidth" → "integer 16..8192, default 1600: the widest picture returned").
    public var paramsDoc: [(String, String)] {
        params.map { f in (f.key, ParamDoc.text(f)) }
    }
}

/// A param in words, from its manifest entry.
public enum ParamDoc {
    public static func text(_ f: ConfigField) -> String {
        var head = f.type.description
        if f.clamps { head += " (brought into range, not refused)" }
        if f.required { head += ", required" }
        if let d = f.defaultText { head += ", default \(d)" }
        return f.doc.isEmpty ? head : "\(head): \(f.doc)"
    }
}
