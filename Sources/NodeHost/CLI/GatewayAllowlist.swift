import Config
import HostPresence
import Kit
import Registry
import Runtime
import Store
import Support

/// What a current OpenClaw gateway does with each command this node declares, and the config
/// snippet for the ones it drops (docs/PROTOCOL.md §5). The command list comes from the command
/// table; the gateway's own lists below are facts about the gateway, kept here and nowhere else.
public enum GatewayAllowlist {
    /// How the newest gateway treats one command of a Linux node (platform "linux", family "Linux").
    public enum Policy: String, Sendable, CaseIterable {
        /// In the Linux platform defaults (`system.notify`, `computer.act`, `device.apps`) or,
        /// for a node with cap `talk`, the push-to-talk commands.
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
            case .canvasPlugin: return "allowed by the gateway's Canvas plugin (when enabled)"
            case .afterSurfaceApproval: return "allowed once an operator approves this node's command surface (openclaw nodes pending / approve)"
            case .allowlistDangerous: return "dangerous: only with gateway.nodes.commands.allow"
            case .allowlist: return "not in the Linux defaults: needs gateway.nodes.commands.allow"
            }
        }
    }

    /// Newest `PLATFORM_DEFAULTS.linux` minus the desktop-host commands (node-command-policy.ts).
    static let linuxDefaults: Set<String> = ["system.notify", "computer.act", "device.apps"]
    /// `TALK_PTT_COMMANDS`, allowed for a node with cap `talk` or any declared `talk.*` command.
    static let talkCommands: Set<String> = ["talk.ptt.start", "talk.ptt.stop", "talk.ptt.cancel", "talk.ptt.once"]
    /// `DESKTOP_HOST_COMMANDS` (those this node can declare; the set also holds file, browser and
    /// MCP commands).
    static let desktopHostCommands: Set<String> = ["system.run.prepare", "system.run", "system.which",
                                                   "system.execApprovals.get", "system.execApprovals.set", "screen.snapshot"]
    /// The Canvas plugin's `registerNodeInvokePolicy` commands (extensions/canvas).
    static let canvasPluginCommands: Set<String> = ["canvas.present", "canvas.hide", "canvas.navigate", "canvas.eval",
                                                    "canvas.snapshot", "canvas.a2ui.push", "canvas.a2ui.pushJSONL", "canvas.a2ui.reset"]
    /// Commands every gateway version allows for platform linux (early and mid-2026 too).
    static let linuxDefaultEverywhere: Set<String> = ["system.notify"]

    public static func policy(_ command: String, dangerous: Bool, caps: [String]) -> Policy {
        if dangerous { return .allowlistDangerous }
        if linuxDefaults.contains(command) { return .allowedByDefault }
        if talkCommands.contains(command), caps.contains("talk") { return .allowedByDefault }
        if canvasPluginCommands.contains(command) { return .canvasPlugin }
        if desktopHostCommands.contains(command) { return .afterSurfaceApproval }
        return .allowlist
    }

    /// Every declared command with its policy, in table order.
    public static func classify(_ manifest: CommandRegistry.Manifest, dangerous: Set<String>) -> [(command: String, policy: Policy)] {
        manifest.commands.map { ($0, policy($0, dangerous: dangerous.contains($0), caps: manifest.caps)) }
    }

    /// What a current gateway needs in `gateway.nodes.commands.allow` for this node.
    public static func needsAllow(_ manifest: CommandRegistry.Manifest, dangerous: Set<String>) -> [String] {
        classify(manifest, dangerous: dangerous).filter { [.allowlist, .allowlistDangerous].contains($0.policy) }.map(\.command)
    }

    /// What an older gateway (before 2026.7.2, `gateway.nodes.allowCommands`) needs: it knows
    /// neither the desktop-host approval nor the Canvas plugin, so everything but system.notify.
    public static func needsAllowOlder(_ manifest: CommandRegistry.Manifest) -> [String] {
        manifest.commands.filter { !linuxDefaultEverywhere.contains($0) }
    }

    /// JSON5 for the gateway's config, for both key names (§5.3).
    public static func snippet(_ manifest: CommandRegistry.Manifest, dangerous: Set<String>) -> String {
        func list(_ c: [String]) -> String { c.map { "\"\($0)\"" }.joined(separator: ", ") }
        return """
            // OpenClaw gateway 2026.7.2 and later:
            { gateway: { nodes: { commands: { allow: [\(list(needsAllow(manifest, dangerous: dangerous)))] } } } }
            // OpenClaw gateway before 2026.7.2:
            { gateway: { nodes: { allowCommands: [\(list(needsAllowOlder(manifest)))] } } }
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
