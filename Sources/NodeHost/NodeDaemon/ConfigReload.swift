import Config
import Kit
import Plugins
import Registry
import Support

/// What a config reload (SIGHUP, `systemctl reload openclaw-node`) does to a running daemon's
/// capabilities: the ones whose setup is unchanged keep running as they are (a warm speech model,
/// an open browser, a plugin process), the rest are stopped, and the new or changed ones are
/// started. Settings the running daemon cannot take over (state directory, presence) are named so
/// the log can say a restart is needed.
public struct ReloadOutcome: Sendable {
    public var started: [String] = []
    public var stopped: [String] = []
    public var restarted: [String] = []
    /// The caps/commands/permissions the gateway was told at connect are no longer what the node
    /// serves: the gateway takes them only at connect, so the session must be renewed.
    public var manifestChanged = false
    /// Keys that only a restart applies.
    public var needsRestart: [String] = []

    public var summary: String {
        var parts: [String] = []
        if !started.isEmpty { parts.append("started \(started.joined(separator: ", "))") }
        if !restarted.isEmpty { parts.append("restarted \(restarted.joined(separator: ", "))") }
        if !stopped.isEmpty { parts.append("stopped \(stopped.joined(separator: ", "))") }
        return parts.isEmpty ? "no capability changed" : parts.joined(separator: "; ")
    }
}

extension NodeRuntime {
    /// Installs the command table of `new`, reusing every capability of the current table whose
    /// setup is the same under both configs. `fresh` is what the capability factory built for
    /// `new` (not started); instances that are not needed are dropped unstarted.
    /// Capabilities that go are shut down before their successors start, so a device (camera,
    /// microphone) is never opened twice.
    public func reload(from old: NodeConfig, to new: NodeConfig, capabilities fresh: [any Capability]) async -> ReloadOutcome {
        let before = registry
        var out = ReloadOutcome()
        var carried: [String: CommandRegistry.Entry] = [:]
        var list: [any Capability] = []
        for cap in fresh {
            if let e = before.entry(forCapability: cap.name), Self.sameSetup(cap.name, old: (old, e.capability), new: (new, cap)) {
                carried[cap.name] = e
                list.append(e.capability)
            } else {
                list.append(cap)
            }
        }
        for e in before.entries where carried[e.capability.name] == nil { await e.capability.lifecycle?.shutdown() }
        let after = await CommandRegistry.load(list, enabled: { new.isEnabled($0) }, start: true, carried: carried)
        dispatcher.install(after)
        // A carried capability the new table refused (a new one declares one of its commands) is
        // no longer anywhere: stop it, or its process would outlive the daemon.
        for (name, e) in carried where after.entry(forCapability: name).map({ $0.capability is UnloadedCapability }) ?? true {
            await e.capability.lifecycle?.shutdown()
        }

        let was = Set(before.entries.filter(\.advertised).map(\.capability.name))
        let now = Set(after.entries.filter(\.advertised).map(\.capability.name))
        for e in after.entries where carried[e.capability.name] == nil && e.advertised {
            if was.contains(e.capability.name) { out.restarted.append(e.capability.name) } else { out.started.append(e.capability.name) }
        }
        out.stopped = before.entries.map(\.capability.name).filter { was.contains($0) && !now.contains($0) }
        out.manifestChanged = before.manifest != after.manifest
        if old.stateDir != new.stateDir { out.needsRestart.append("node.stateDir") }
        if old.releaseIdleLibrariesAfter != new.releaseIdleLibrariesAfter { out.needsRestart.append("node.releaseIdleLibrariesAfter") }
        if old.metrics != new.metrics { out.needsRestart.append("metrics") }
        // Keys a bundle's manifest marks as needing a restart of the node.
        for m in new.catalog.manifests {
            for key in m.restartKeys where old.capability(m.name).settings[key] != new.capability(m.name).settings[key] {
                out.needsRestart.append("capabilities.\(m.name).\(key)")
            }
        }
        if old.presence.mode != new.presence.mode || old.presence.display != new.presence.display
            || old.presence.idleSeconds != new.presence.idleSeconds || old.presence.keepAwake != new.presence.keepAwake { out.needsRestart.append("presence") }
        return out
    }

    /// Whether a capability would run the same under the new config: a bundle's section (enabled
    /// flag and keys, not where they sit in the file), a plugin's directory, manifest and config.
    static func sameSetup(_ name: String, old: (NodeConfig, any Capability), new: (NodeConfig, any Capability)) -> Bool {
        switch (old.1, new.1) {
        case let (a as PluginCapability, b as PluginCapability):
            return a.pluginManifest == b.pluginManifest && a.settings == b.settings
        case (is PluginCapability, _), (_, is PluginCapability):
            return false
        default:
            let a = old.0.capabilities[name], b = new.0.capabilities[name]
            return a?.enabled == b?.enabled && a?.settings == b?.settings && old.0.isEnabled(name) == new.0.isEnabled(name)
        }
    }
}

extension NodeConfig {
    /// The settings that decide which gateway the node talks to and how it presents itself there:
    /// when they change, a reload starts a new gateway session with them.
    public func sameGatewaySettings(as other: NodeConfig) -> Bool {
        let a = gateway, b = other.gateway
        return a.url == b.url && a.name == b.name && a.token == b.token && a.password == b.password
            && a.setupCode == b.setupCode && a.tlsFingerprint == b.tlsFingerprint && a.allowTOFU == b.allowTOFU
            && a.allowInsecure == b.allowInsecure && a.lanDiscovery == b.lanDiscovery
            && a.wideAreaDomain == b.wideAreaDomain && a.nameserver == b.nameserver && displayName == other.displayName
    }
}
