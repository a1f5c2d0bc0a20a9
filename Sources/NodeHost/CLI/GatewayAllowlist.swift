import Config
import HostPresence
import Kit
import Registry
import Runtime
import Store
import Support

/// Which of this node's commands a gateway's Linux policy would drop, and the config snippet that
/// lets them through (docs/PROTOCOL.md §5). Derived from the command table, never listed by hand.
public enum GatewayAllowlist {
    /// Commands every gateway version allows for platform linux by default (§5.2: early, mid and
    /// newest tables all contain system.notify; everything else differs between versions or
    /// needs desktop-host approval, so it is safest to allow it explicitly).
    static let linuxDefaultEverywhere: Set<String> = ["system.notify"]

    /// Commands the node declares (advertised ones) that need an explicit gateway allow entry.
    public static func filtered(_ manifest: CommandRegistry.Manifest) -> [String] {
        manifest.commands.filter { !linuxDefaultEverywhere.contains($0) }
    }

    /// JSON5 for the gateway's config, for both key names (§5.3: `gateway.nodes.allowCommands`
    /// before 2026.7.2, `gateway.nodes.commands.allow` from 2026.7.2 on).
    public static func snippet(_ manifest: CommandRegistry.Manifest) -> String {
        let list = filtered(manifest).map { "\"\($0)\"" }.joined(separator: ", ")
        return """
            // OpenClaw gateway before 2026.7.2:
            { gateway: { nodes: { allowCommands: [\(list)] } } }
            // OpenClaw gateway 2026.7.2 and later:
            { gateway: { nodes: { commands: { allow: [\(list)] } } } }
            """
    }
}
