import Config
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
        let a = try Arguments(args, valued: ["params", "timeout", "config"], known: ["local", "compact"])
        if a.flag("help") { Out.line(help); return ExitCode.ok.rawValue }
        guard a.positionals.count == 1, let command = a.positionals.first else {
            throw Arguments.Failure(description: "expected exactly one COMMAND")
        }
        var params: JSONValue?
        if let text = a.option("params") {
            guard let v = JSONValue.parse(text) else {
                return fail(.invalidRequest("--params is not valid JSON"))
            }
            params = v
        }
        let timeout = try a.option("timeout").map { (t: String) throws -> Int in
            guard let n = Int(t), n >= 0 else { throw Arguments.Failure(description: "--timeout must be a whole number of milliseconds") }
            return n
        }
        let pretty = !a.flag("compact")

        // A running daemon has checked its config already: find its socket without the bundles.
        if !a.flag("local"), let dir = ConfigLoader.stateDir(path: ConfigLoader.resolvePath(explicit: a.option("config"))),
           let client = ControlClient.connect(stateDir: dir) {
            var req: [String: JSONValue] = ["op": "invoke", "command": .string(command)]
            if let params { req["params"] = params }
            if let timeout { req["timeoutMs"] = .number(Double(timeout)) }
            let reply = try client.request(.object(req))
            if reply["ok"]?.boolValue == true { Out.json(reply["payload"] ?? .null, pretty: pretty); return ExitCode.ok.rawValue }
            Out.json(reply["error"] ?? NodeError.unavailable("malformed reply from daemon").json, pretty: pretty)
            return ExitCode.failure.rawValue
        }

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
