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

    /// The command line, checked.
    private struct Request {
        let command: String
        let params: JSONValue?
        let timeout: Int?
        let pretty: Bool
        let local: Bool
        let config: String?
    }

    private static func request(_ a: Arguments) throws -> Request {
        guard a.positionals.count == 1, let command = a.positionals.first else {
            throw Arguments.Failure(description: "expected exactly one COMMAND")
        }
        var params: JSONValue?
        if let text = a.option("params") {
            guard let v = JSONValue.parse(text) else { throw BadParams() }
            params = v
        }
        let timeout = try a.option("timeout").map { (t: String) throws -> Int in
            guard let n = Int(t), n >= 0 else { throw Arguments.Failure(description: "--timeout must be a whole number of milliseconds") }
            return n
        }
        return Request(command: command, params: params, timeout: timeout, pretty: !a.flag("compact"),
                       local: a.flag("local"), config: a.option("config"))
    }

    private struct BadParams: Error {}

    /// `invoke` through a running daemon, before the async runtime starts (CLI.synchronousMain):
    /// a request and a reply on the control socket need no thread pool, and for a script that
    /// invokes once per call, starting and stopping those threads was a visible part of each call.
    /// nil when there is no daemon to ask (or the command line needs the full path to report on).
    static func viaDaemon(_ args: [String]) -> Int32? {
        guard let a = try? Arguments(args, valued: ["params", "timeout", "config"], known: ["local", "compact"]),
              !a.flag("help"), let r = try? request(a), !r.local,
              let dir = ConfigLoader.stateDir(path: ConfigLoader.resolvePath(explicit: r.config)),
              let client = ControlClient.connect(stateDir: dir) else { return nil }
        return ask(client, r)
    }

    private static func ask(_ client: ControlClient, _ r: Request) -> Int32 {
        var req: [String: JSONValue] = ["op": "invoke", "command": .string(r.command)]
        if let params = r.params { req["params"] = params }
        if let timeout = r.timeout { req["timeoutMs"] = .number(Double(timeout)) }
        let reply: JSONValue
        do { reply = try client.request(.object(req)) } catch {
            Out.err("openclaw-node invoke: \(error)")
            return ExitCode.failure.rawValue
        }
        if reply["ok"]?.boolValue == true { Out.json(reply["payload"] ?? .null, pretty: r.pretty); return ExitCode.ok.rawValue }
        Out.json(reply["error"] ?? NodeError.unavailable("malformed reply from daemon").json, pretty: r.pretty)
        return ExitCode.failure.rawValue
    }

    static func main(_ args: [String], capabilities: CLI.CapabilityFactory) async throws -> Int32 {
        let a = try Arguments(args, valued: ["params", "timeout", "config"], known: ["local", "compact"])
        if a.flag("help") { Out.line(help); return ExitCode.ok.rawValue }
        let r: Request
        do { r = try request(a) } catch is BadParams { return fail(.invalidRequest("--params is not valid JSON")) }
        let (command, params, timeout, pretty) = (r.command, r.params, r.timeout, r.pretty)

        // A running daemon has checked its config already: find its socket without the bundles.
        if !r.local, let dir = ConfigLoader.stateDir(path: ConfigLoader.resolvePath(explicit: r.config)),
           let client = ControlClient.connect(stateDir: dir) {
            return ask(client, r)
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
