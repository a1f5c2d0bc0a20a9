import Config
import Kit
import Registry
import Store
import Support

/// What a current OpenClaw gateway does with each command this node declares, and the config
/// snippet for the ones it drops (docs/PROTOCOL.md §5). Each row's class per gateway generation
/// is in its manifest (a bundle's, or a plugin's plugin.json5); nothing here names a command.
public enum GatewayAllowlist {
    /// How the newest gateway treats one command of a Linux node (platform "linux", family "Linux").
    public enum Policy: String, Sendable, CaseIterable {
        /// In the gateway's Linux platform defaults (or allowed for a node with the command's cap).
        case allowedByDefault
        /// Allowed on every platform by the gateway's Canvas plugin when it is enabled.
        case canvasPlugin
        /// A desktop-host command: allowed once the operator approves the node's command surface.
        case afterSurfaceApproval
        /// In the gateway's dangerous set: only with an explicit `gateway.nodes.commands.allow`.
        case allowlistDangerous
        /// In no Linux default: needs `gateway.nodes.commands.allow`.
        case allowlist

        public var heading: String {
            switch self {
            case .allowedByDefault: return "allowed by default"
            case .canvasPlugin: return "allowed by the gateway's Canvas plugin when it is enabled (in the snippet for when it is not)"
            case .afterSurfaceApproval: return "allowed once an operator approves this node's command surface (openclaw nodes pending / approve)"
            case .allowlistDangerous: return "dangerous: only with gateway.nodes.commands.allow"
            case .allowlist: return "not in the Linux defaults: needs gateway.nodes.commands.allow"
            }
        }
    }

    /// The newest gateway's treatment of one row: the manifest's class, dangerous first.
    public static func policy(_ spec: CommandSpec) -> Policy {
        if spec.dangerous { return .allowlistDangerous }
        switch spec.row.gateway {
        case .default: return .allowedByDefault
        case .canvasPlugin: return .canvasPlugin
        case .surfaceApproval: return .afterSurfaceApproval
        case .allowlist: return .allowlist
        }
    }

    /// Every advertised command with its policy, in table order.
    public static func classify(_ specs: [CommandSpec]) -> [(command: String, policy: Policy)] {
        specs.map { ($0.name, policy($0)) }
    }

    /// What a current gateway needs in `gateway.nodes.commands.allow` for this node. The Canvas
    /// plugin's commands are in it too: the plugin can be off (`plugins.entries.canvas`), and then
    /// nothing else allows them on Linux, while an allow entry is harmless when it is on.
    public static func needsAllow(_ specs: [CommandSpec]) -> [String] {
        classify(specs).filter { [.allowlist, .allowlistDangerous, .canvasPlugin].contains($0.policy) }.map(\.command)
    }

    /// What an older gateway (before 2026.7.2, `gateway.nodes.allowCommands`) needs: it knows
    /// neither the desktop-host approval nor the Canvas plugin, so all but its few defaults.
    public static func needsAllowOlder(_ specs: [CommandSpec]) -> [String] {
        specs.filter { $0.dangerous || $0.row.olderGateway != .default }.map(\.name)
    }

    /// JSON5 for the gateway's config, for both key names (§5.3).
    public static func snippet(_ specs: [CommandSpec]) -> String {
        func list(_ c: [String]) -> String { c.map { "\"\($0)\"" }.joined(separator: ", ") }
        return """
            // OpenClaw gateway 2026.7.2 and later:
            { gateway: { nodes: { commands: { allow: [\(list(needsAllow(specs)))] } } } }
            // OpenClaw gateway before 2026.7.2:
            { gateway: { nodes: { allowCommands: [\(list(needsAllowOlder(specs)))] } } }
            """
    }

    /// Why a changed allowlist is not the end of it: the gateway trims what a node declares to
    /// what its pairing approved, and takes the declaration only at connect.
    public static let afterChangingNote = """
        After changing the gateway's allowlist, restart the node (systemctl restart openclaw-node) so
        it declares its commands again, then approve its new command list on the gateway:
        `openclaw nodes pending`, `openclaw nodes approve <requestId>`. Until then the gateway keeps
        only the commands approved before.
        """
}
