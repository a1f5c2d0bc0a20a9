import Config
import Kit
import Registry
import Support

/// A plugin's commands as a capability: they go through the same registry, dispatcher gates and
/// manifest as built-in ones.
public final class PluginCapability: Capability, CapabilityLifecycle, EventSource {
    /// Its plugin.json5 as a capability manifest (rows and gates).
    public let manifest: BundleManifest
    public let handlers: [CommandHandler]
    let process: PluginProcess
    public let pluginManifest: PluginManifest
    /// Its `plugins.entries.<id>.config`, handed to the process at hello (a reload compares it).
    public let settings: JSONValue
    public var origin: String { "plugin \(pluginManifest.id) in \(pluginManifest.directory)" }

    public init(manifest: PluginManifest, config: JSONValue) {
        self.pluginManifest = manifest
        self.settings = config
        let process = PluginProcess(manifest: manifest, config: config)
        self.process = process
        self.manifest = BundleManifest(
            name: manifest.capability, summary: "plugin \(manifest.id) \(manifest.version)", enabledByDefault: true, library: nil,
            commands: manifest.commands.map { c in
                BundleManifest.Command(name: c.name, summary: "\(c.summary) (plugin \(manifest.id))",
                                       requiresForeground: c.requiresForeground, dangerous: c.dangerous, permission: c.permission,
                                       gateway: c.gateway, olderGateway: c.olderGateway)
            },
            file: manifest.directory + "/plugin.json5")
        self.handlers = manifest.commands.map { c in
            CommandHandler(c.name, params: PluginParams.self) { p, context throws(NodeError) in
                try await process.invoke(id: context.invokeId, command: c.name, params: p.value, deadline: context.deadline)
            }
        }
    }

    /// Whether the plugin's executable is there to run; starting it is `start()`'s (daemon) or the
    /// first invoke's (one-shot `invoke`) job.
    public func availability() async -> Availability {
        FileSystem.isExecutableFile(pluginManifest.executable)
            ? .available : .unavailable("plugin \(pluginManifest.id): \(pluginManifest.executable) is not an executable file")
    }

    /// The daemon starts the plugin before advertising it, so the first invoke is fast and a plugin
    /// that cannot start (no hello, exits) is not advertised.
    public func start() async -> Availability {
        do { try await process.ensureStarted(); return .available }
        catch { return .unavailable(error.message) }
    }

    public func events() async -> AsyncStream<CapabilityEvent>? { process.events }

    public func shutdown() async { await process.stop() }
}

/// Finds plugins in `plugins.dirs` and builds capabilities for those enabled in `plugins.entries`.
public enum PluginLoader {
    public static func capabilities(config: NodeConfig, log: Logger = Logger(component: "plugins")) -> [any Capability] {
        var out: [any Capability] = []
        var seen = Set<String>()
        let base = config.sourceFile.map { PathName.directory($0) } ?? FileSystem.currentDirectory
        for dir in config.pluginDirs {
            let root = dir.hasPrefix("/") ? dir : base + "/" + dir
            for entry in ((try? FileSystem.contentsOfDirectory(root)) ?? []).sorted() {
                let pdir = root + "/" + entry
                guard FileSystem.exists(pdir + "/plugin.json5") else { continue }
                let manifest: PluginManifest
                do { manifest = try PluginManifest.load(directory: pdir) }
                catch { log.warn("skipping \(pdir): \(error.description)"); continue }
                guard let settings = config.pluginEntries[manifest.id], settings.enabled else {
                    log.info("found plugin \(manifest.id) in \(pdir); not enabled (plugins.entries.\"\(manifest.id)\".enabled: true)")
                    continue
                }
                guard seen.insert(manifest.id).inserted else { log.warn("plugin \(manifest.id) found twice; using the first"); continue }
                out.append(PluginCapability(manifest: manifest, config: settings.config))
            }
        }
        return out
    }
}

import Glibc
