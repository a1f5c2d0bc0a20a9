import Config
import ControlLink
import DeviceInfo
import Glibc
import HostPresence
import Kit
import Plugins
import Registry
import Skills
import Store
import Support
import Transport

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
    /// `presence`: the monitor the capabilities were built with (their `CapabilityContext.presence`);
    /// nil makes one from the config (or from `presenceSource`).
    public init(config: NodeConfig, capabilities: [any Capability], daemon: Bool = false,
                presenceSource: (any PresenceSource)? = nil, presence: PresenceMonitor? = nil) async throws(StateStore.Failure) {
        self.config = config
        self.store = try StateStore(stateDir: config.stateDir)
        self.presence = presence ?? NodeRuntime.presenceMonitor(config, source: presenceSource)
        // The node id is read when a skill locator first needs it, so a command that never runs
        // one does not create the device key.
        NodeSkills.shared.configure(SkillSources(config), nodeId: { [store] in try? store.identity().deviceId })
        let registry = await CommandRegistry.load(capabilities, enabled: { config.isEnabled($0) }, start: daemon)
        self.dispatcher = Dispatcher(registry: registry, presence: self.presence)
    }

    /// The presence decision for a config: made before the capabilities, which are handed it.
    public static func presenceMonitor(_ config: NodeConfig, source: (any PresenceSource)? = nil) -> PresenceMonitor {
        PresenceMonitor(mode: config.presence.mode, source: source ?? PresenceSources.make(config.presence))
    }

    /// Builds the capability list for a config and the node's presence gate (tests may pass their own).
    public typealias CapabilityFactory = @Sendable (NodeConfig, any PresenceSource) throws(ConfigLoader.Failure) -> [any Capability]

    /// Every capability of this installation: the built-in device capability, one per installed
    /// bundle manifest — its library opened only when its section is enabled, so a disabled camera
    /// never loads the camera's libraries, and its commands are still known from the manifest —
    /// and the enabled out-of-process plugins. In that order: on a name or command clash the
    /// registry keeps the first, so a plugin cannot take over a built-in command. The config was
    /// already checked against the manifests' keys when it was read.
    public static func capabilities(config: NodeConfig, presence: any PresenceSource) throws(ConfigLoader.Failure) -> [any Capability] {
        var out: [any Capability] = [DeviceCapability(storagePath: config.stateDir)]
        for manifest in config.catalog.bundles {
            out.append(bundleCapability(manifest, config: config, presence: presence))
        }
        return out + PluginLoader.capabilities(config: config)
    }

    /// The capability of one bundle: loaded and built from its context when enabled, otherwise an
    /// unloaded one that answers for it.
    public static func bundleCapability(_ manifest: BundleManifest, config: NodeConfig, presence: any PresenceSource) -> any Capability {
        guard config.isEnabled(manifest.name) else {
            return UnloadedCapability(manifest: manifest, reason: "disabled in config")
        }
        switch BundleLoader.load(manifest) {
        case .success(let exports):
            guard let make = exports.capability else {
                return UnloadedCapability(manifest: manifest, reason: "bundle \(manifest.library ?? manifest.name) provides no capability")
            }
            return make(context(manifest, config: config, presence: presence))
        case .failure(let f):
            return UnloadedCapability(manifest: manifest, reason: f.description)
        }
    }

    /// All a bundle is given of `config` (CapabilityContext): its own section, directory and documents.
    public static func context(_ manifest: BundleManifest, config: NodeConfig, presence: any PresenceSource) -> CapabilityContext {
        var section = config.capability(manifest.name)
        section.enabled = true
        let hidden = PrivatePaths.of(config)
        var context = CapabilityContext(
            manifest: manifest, section: section,
            stateDirectory: PathName.join(config.stateDir, manifest.name),
            privateDirectories: hidden.directories, privateFiles: hidden.files,
            documents: CapabilityDocuments(capability: manifest.name, stateDir: config.stateDir),
            presence: presence, network: VerifiedNetworkStreams(),
            releaseIdleLibrariesAfter: config.releaseIdleLibrariesAfter)
        context.skills = NodeSkills.shared.locator
        context.keepAwake = KeepAwakeKeeper.shared
        return context
    }

    /// The control socket of the daemon that uses this config's stateDir.
    public var controlSocketPath: String { ControlPaths.socket(stateDir: config.stateDir) }

    public func shutdown() async {
        await presence.stop()
        for e in registry.entries { await e.capability.lifecycle?.shutdown() }
    }
}
