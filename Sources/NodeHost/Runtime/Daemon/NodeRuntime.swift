import Config
import FoundationEssentials
import Glibc
import HostPresence
import Kit
import Registry
import Store
import Support

/// Everything one node process runs on: config, state, presence, the command registry and its
/// dispatcher. `openclaw-node run` keeps one alive; one-shot CLI commands build one and drop it.
public final class NodeRuntime: Sendable {
    public let config: NodeConfig
    public let store: StateStore
    public let presence: PresenceMonitor
    public let dispatcher: Dispatcher
    /// The command table in force (replaced by a config reload).
    public var registry: CommandRegistry { dispatcher.registry }

    /// `daemon`: start the capabilities' background work (`Capability.start`); one-shot CLI
    /// commands leave it off and start only what their one invoke needs.
    public init(config: NodeConfig, capabilities: [any Capability], daemon: Bool = false,
                presenceSource: (any PresenceSource)? = nil) async throws(StateStore.Failure) {
        self.config = config
        self.store = try StateStore(stateDir: config.stateDir)
        self.presence = PresenceMonitor(mode: config.presence.mode,
                                        source: presenceSource ?? PresenceSources.make(config.presence))
        let registry = await CommandRegistry.load(capabilities, enabled: { config.isEnabled($0) }, start: daemon)
        self.dispatcher = Dispatcher(registry: registry, presence: presence)
    }

    /// Builds the capability list for a config (tests may pass their own).
    public typealias CapabilityFactory = @Sendable (NodeConfig) throws(ConfigLoader.Failure) -> [any Capability]

    /// Every capability this config names: the built-in device capability, one bundle per
    /// `capabilities.<name>` section — opened only when that section is enabled, so a disabled
    /// camera never loads the camera's libraries — and the enabled out-of-process plugins. In that
    /// order: on a name or command clash the registry keeps the first, so a plugin cannot take
    /// over a built-in command. A loaded bundle's section is checked against the keys the bundle
    /// declares; any problem there is a config error, as for the rest of the file.
    public static func capabilities(config: NodeConfig) throws(ConfigLoader.Failure) -> [any Capability] {
        var out: [any Capability] = [DeviceCapability(storagePath: config.stateDir)]
        var errors: [ConfigError] = []
        for name in config.bundledCapabilityNames {
            guard config.isEnabled(name) else {
                out.append(UnloadedCapability(name: name, reason: "disabled in config")); continue
            }
            switch BundleLoader.load(name) {
            case .success(let exports):
                // A section with problems is never handed to its capability: the command stops
                // with the config error instead.
                let problems = config.sectionErrors(name, fields: exports.configFields)
                errors += problems
                if !problems.isEmpty { continue }
                let context = CapabilityContext(config: config, documents: CapabilityDocuments(capability: name, stateDir: config.stateDir))
                if let make = exports.capability { out.append(make(context)) }
                else { out.append(UnloadedCapability(name: name, reason: "bundle \(BundleLoader.fileName(name)) provides no capability")) }
            case .failure(let f): out.append(UnloadedCapability(name: name, reason: f.description))
            }
        }
        if !errors.isEmpty { throw .invalid(errors) }
        return out + PluginLoader.capabilities(config: config)
    }

    /// The control socket of the daemon that uses this config's stateDir.
    public var controlSocketPath: String { ControlPaths.socket(stateDir: config.stateDir) }

    public func shutdown() async {
        await presence.stop()
        for e in registry.entries { await e.capability.shutdown() }
    }
}

public enum ControlPaths {
    public static func socket(stateDir: String) -> String { stateDir + "/control.sock" }
}
