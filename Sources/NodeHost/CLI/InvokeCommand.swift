import Config
import ControlLink
import ControlSocket
import Glibc
import Kit
import NodeDaemon
import Registry
import Store
import Support

/// `openclaw-node invoke COMMAND [--params JSON]`: through the running daemon's control socket when
/// one is up (so presence overrides and warm devices apply), else in-process through a fresh
/// dispatcher. Either way the command takes the same gates as a gateway invoke.
enum InvokeCommand {
    static let help = """
        Usage: openclaw-node invoke COMMAND [--params JSON] [--timeout MS] [--local] [--config FILE]

        Runs COMMAND (e.g. device.info) and prints its payload as JSON on stdout (exit 0), or prints
        {"code":…,"message":…} and exits 1.

          --params JSON   the command's params object (default {}); `openclaw-node caps COMMAND` lists
                          them with their types, ranges, defaults and meaning. Params are checked
                          before the command runs: a bad one is INVALID_REQUEST naming the field
          --timeout MS    give up after MS milliseconds (default 30000; 0 = no limit)
          --local         run in this process even if a daemon is running
        """

    static func main(_ args: [String], capabilities: CLI.CapabilityFactory) async throws -> Int32 {
        let a = try Arguments(args, valued: DaemonInvoke.valued, known: DaemonInvoke.known)
        if a.flag("help") { Out.line(help); return ExitCode.ok.rawValue }
        let r: DaemonInvoke.Request
        do { r = try DaemonInvoke.request(a) } catch is DaemonInvoke.BadParams { return fail(.invalidRequest("--params is not valid JSON")) }
        let (command, params, timeout, pretty) = (r.command, r.params, r.timeout, r.pretty)

        // A running daemon has checked its config already: find its socket without the bundles.
        if !r.local, let client = DaemonInvoke.client(for: r) { return DaemonInvoke.ask(client, r) }

        let config = try CLI.loadConfig(a)
        let presence = NodeRuntime.presenceMonitor(config)
        let runtime = try await NodeRuntime(config: config, capabilities: try capabilities(config, presence), presence: presence)
        let result = await runtime.dispatcher.invoke(id: "cli-" + SecureRandom.uuid(), command: command,
                                                     params: InvokeParams(params), timeoutMs: timeout,
                                                     maxPayloadBytes: ControlProtocol.maxPayloadBytes)
        // Released before returning: a shutdown racing exit() would close X displays (and other
        // devices) after their libraries' destructors ran.
        await runtime.shutdown()
        switch result {
        case .success(let payload): Out.json(payload, pretty: pretty); return ExitCode.ok.rawValue
        case .failure(let e): return fail(e, pretty: pretty)
        }
    }

    private static func fail(_ e: NodeError, pretty: Bool = true) -> Int32 {
        Out.json(e.json, pretty: pretty)
        return ExitCode.failure.rawValue
    }
}
