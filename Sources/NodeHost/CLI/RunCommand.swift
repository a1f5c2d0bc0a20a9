import Config
import Glibc
import Kit
import NodeDaemon
import Registry
import Store
import Support

/// `openclaw-node run`: parses its arguments and runs the `Daemon`.
enum RunCommand {
    static let help = """
        Usage: openclaw-node run [--config FILE]

        Runs the node until SIGTERM or SIGINT. Logs go to stderr (journald under systemd);
        OPENCLAW_NODE_LOG=debug for more.

        SIGHUP (systemctl reload openclaw-node) reads the config file again: capabilities and
        plugins that were enabled, disabled or changed are started, stopped or restarted; the rest
        keep running. The gateway session stays up unless the gateway settings changed or the
        node's command list did (a gateway learns a node's commands only when it connects, so the
        node reconnects at once, with its device token). A config with errors is logged and the
        running one kept. node.stateDir and presence changes need a restart.

        Which gateway: gateway.url (or OPENCLAW_GATEWAY_URL, or gateway.setupCode) when set — then
        discovery is skipped. Otherwise the node browses for gateways (LAN via avahi-daemon,
        wide-area DNS-SD when gateway.discovery.wideAreaDomain is set) and connects to the one named
        gateway.name, else the one it chose last time, else the only one found; with several and
        no name it lists them in the log and keeps waiting. `openclaw-node discover` shows the same
        view.
        """

    static func main(_ args: [String], capabilities: @escaping CLI.CapabilityFactory) async throws -> Int32 {
        let a = try Arguments(args, valued: ["config"], known: [])
        if a.flag("help") { Out.line(help); return ExitCode.ok.rawValue }
        _ = SelfExec.program  // resolved now, before anything could change the working directory
        let config = try CLI.loadConfig(a)
        if try await Daemon.run(config: config, capabilities: capabilities) == .restart {
            let why = SelfExec.restart()
            Out.err("openclaw-node run: could not start again: \(why); exiting for the service manager to restart it")
            return ExitCode.failure.rawValue
        }
        return ExitCode.ok.rawValue
    }
}
