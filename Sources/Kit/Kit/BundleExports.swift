import Config
import Support

/// What a bundle hands the core once its stamp matched (see the CBundleABI shim): makers for the
/// parts it provides. A capability bundle sets `capability` (and `cli` when its manifest declares
/// subcommands); the X11 helper library sets `presenceSource` for `presence.mode: "x11"`; a library
/// loaded on first use (the video encoder) sets `service`, an object its users know the protocol
/// of. A maker only builds objects: devices, threads and child processes start later, in the
/// capability's own lifecycle. What the bundle is (name, config keys, commands) is not here but in
/// its manifest, which the core reads without loading the library.
public final class BundleExports: Sendable {
    public let capability: (@Sendable (CapabilityContext) -> any Capability)?
    public let presenceSource: (@Sendable (NodeConfig.Presence) -> any PresenceSource)?
    public let service: (any Sendable)?
    /// Runs one of the manifest's `cli` subcommands: (name, arguments after it, context) → exit code.
    public let cli: (@Sendable (String, [String], BundleCLIContext) async -> Int32)?

    public init(capability: (@Sendable (CapabilityContext) -> any Capability)? = nil,
                presenceSource: (@Sendable (NodeConfig.Presence) -> any PresenceSource)? = nil,
                service: (any Sendable)? = nil,
                cli: (@Sendable (String, [String], BundleCLIContext) async -> Int32)? = nil) {
        self.capability = capability
        self.presenceSource = presenceSource
        self.service = service
        self.cli = cli
    }

    /// For a bundle's `make` function: the retained pointer the loader takes back.
    public func retainedPointer() -> UnsafeMutableRawPointer { Unmanaged.passRetained(self).toOpaque() }
}

/// What a bundle's CLI subcommand may do: run its own commands through the node's dispatcher (the
/// gates, validation and hash checks a gateway's call gets), ask the running daemon, and print.
public struct BundleCLIContext: Sendable {
    /// Runs a command in this process, through its dispatcher (this bundle is enabled for the call
    /// even if the config has it off; other bundles' commands as the config has them). Cancelling
    /// the calling task cancels the command.
    public let invoke: @Sendable (_ command: String, _ params: JSONValue) async -> Result<JSONValue, NodeError>
    /// The rows of the commands this node advertises (the table a gateway is sent), in table
    /// order: what the node's own MCP server offers as tools.
    public let commands: @Sendable () -> [BundleManifest.Command]
    /// The bundle's own config section, as the config file has it.
    public let section: BundleSection
    /// The bundle's own state directory (`<stateDir>/<name>`; made by the bundle when it needs it, 0700).
    public let stateDirectory: String
    /// Asks this bundle's capability in this process (`ControlQueryable`).
    public let query: @Sendable (_ request: JSONValue) async -> Result<JSONValue, NodeError>
    /// The daemon that uses this config's state directory, over its control socket; nil when none runs.
    public let daemon: DaemonAccess?
    public let printLine: @Sendable (String) -> Void
    public let printError: @Sendable (String) -> Void
    /// TLS for a server the command runs (nil where the core offers none: unit tests).
    public let tls: (any TLSServers)?

    public init(invoke: @escaping @Sendable (String, JSONValue) async -> Result<JSONValue, NodeError>,
                query: @escaping @Sendable (JSONValue) async -> Result<JSONValue, NodeError> = { _ in .failure(.unavailable("no control queries")) },
                daemon: DaemonAccess? = nil, commands: @escaping @Sendable () -> [BundleManifest.Command] = { [] },
                section: BundleSection = BundleSection(enabled: true, settings: [:]), stateDirectory: String = "",
                tls: (any TLSServers)? = nil,
                printLine: @escaping @Sendable (String) -> Void, printError: @escaping @Sendable (String) -> Void) {
        self.invoke = invoke; self.query = query; self.daemon = daemon; self.commands = commands; self.section = section
        self.stateDirectory = stateDirectory; self.tls = tls
        self.printLine = printLine; self.printError = printError
    }
}

/// The running daemon, for a bundle's CLI: its commands through its dispatcher (the same path a
/// gateway's invoke takes, with the servers and state the daemon holds), and its bundle's own
/// state (`ControlQueryable`).
public struct DaemonAccess: Sendable {
    public let invoke: @Sendable (_ command: String, _ params: JSONValue, _ timeoutMs: Int?) async -> Result<JSONValue, NodeError>
    public let query: @Sendable (_ request: JSONValue) async -> Result<JSONValue, NodeError>
    /// The names of the commands the daemon advertises now (a config reload changes them); nil
    /// when it did not answer.
    public let commands: @Sendable () async -> [String]?
    public init(invoke: @escaping @Sendable (String, JSONValue, Int?) async -> Result<JSONValue, NodeError>,
                query: @escaping @Sendable (JSONValue) async -> Result<JSONValue, NodeError>,
                commands: @escaping @Sendable () async -> [String]? = { nil }) {
        self.invoke = invoke; self.query = query; self.commands = commands
    }
}

/// A library's side of a helper process the node starts from its own executable
/// (`openclaw-node NAME`, hidden from help): the video library's encoder process. The service a
/// library exports conforms to it.
public protocol HelperProcessEntry: Sendable {
    /// Runs the helper with the arguments after NAME; the process's exit code.
    func helperMain(_ arguments: [String]) -> Int32
}

/// The hidden subcommands that run helper processes.
public enum HelperSubcommand {
    /// The video library's encoder process (Media's EncoderProcessRecorder starts it).
    public static let videoEncoder = "video-encoder"
}
