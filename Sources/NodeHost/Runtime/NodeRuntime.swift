import Foundation

/// Everything one node process runs on: config, state, presence, the command registry and its
/// dispatcher. `openclaw-node run` keeps one alive; one-shot CLI commands build one and drop it.
public final class NodeRuntime: Sendable {
    public let config: NodeConfig
    public let store: StateStore
    public let presence: PresenceMonitor
    public let registry: CommandRegistry
    public let dispatcher: Dispatcher

    public init(config: NodeConfig, capabilities: [any Capability],
                presenceSource: (any PresenceSource)? = nil) async throws(StateStore.Failure) {
        self.config = config
        self.store = try StateStore(stateDir: config.stateDir)
        self.presence = PresenceMonitor(mode: config.presence.mode,
                                        source: presenceSource ?? PresenceSources.make(config.presence))
        self.registry = await CommandRegistry.load(capabilities, enabled: { config.isEnabled($0) })
        self.dispatcher = Dispatcher(registry: registry, presence: presence)
    }

    /// What lives in NodeHost itself: the device capability and the enabled out-of-process plugins.
    public static func builtinCapabilities(config: NodeConfig) -> [any Capability] {
        [DeviceCapability(storagePath: config.stateDir)] + PluginLoader.capabilities(config: config)
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
