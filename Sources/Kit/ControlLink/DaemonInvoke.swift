import Config
import Glibc
import Kit
import Support

/// `openclaw-node invoke COMMAND [--params JSON] [--timeout MS] [--compact] [--config FILE]`
/// answered by a running daemon over its control socket. One copy for the two programs that do
/// it: the full CLI (which runs the command in-process when no daemon is up) and the launcher
/// installed as /usr/bin/openclaw-node, which has nothing else to start and so answers a
/// script's invoke in half the time (docs/ARCHITECTURE.md, "The launcher").
public enum DaemonInvoke {
    /// The options `invoke` takes (InvokeCommand's help text lists them).
    public static let valued: Set<String> = ["params", "timeout", "config"]
    public static let known: Set<String> = ["local", "compact"]

    /// The command line, checked.
    public struct Request: Sendable {
        public let command: String
        public let params: JSONValue?
        public let timeout: Int?
        public let pretty: Bool
        public let local: Bool
        public let config: String?
    }

    /// `--params` that is not JSON (the full CLI answers it as INVALID_REQUEST).
    public struct BadParams: Error {}

    public static func request(_ a: Arguments) throws -> Request {
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

    /// The exit code when a running daemon answered; nil when there is none to ask, or when the
    /// command line needs the full program (help, --local, a mistake it reports on).
    public static func viaDaemon(_ args: [String]) -> Int32? {
        guard let a = try? Arguments(args, valued: valued, known: known),
              !a.flag("help"), let r = try? request(a), !r.local,
              let client = client(for: r) else { return nil }
        return ask(client, r)
    }

    /// Whether this process found the control socket served by another account (and said so on
    /// stderr): it is not asked again, and the invoke runs in-process.
    public static var refusedTheSocket: Bool { refused.withLock { $0 } }
    private static let refused = Locked(false)

    /// The daemon that uses the config this command line names (its state directory holds the
    /// socket), read without the installed bundles' manifests: a client needs no more.
    public static func client(for r: Request) -> ControlClient? {
        guard !refusedTheSocket, let dir = ConfigLoader.stateDir(path: ConfigLoader.resolvePath(explicit: r.config)) else { return nil }
        switch ControlClient.open(stateDir: dir) {
        case .connected(let c): return c
        case .noDaemon: return nil
        case .refused: refused.withLock { $0 = true }; return nil
        }
    }

    /// Sends the invoke and prints its payload (exit 0) or its error object (exit 1).
    public static func ask(_ client: ControlClient, _ r: Request) -> Int32 {
        var req: [String: JSONValue] = ["op": "invoke", "command": .string(r.command)]
        if let params = r.params { req["params"] = params }
        if let timeout = r.timeout { req["timeoutMs"] = .number(Double(timeout)) }
        let reply: JSONValue
        do { reply = try client.request(.object(req)) } catch {
            StandardStreams.line("openclaw-node invoke: \(error)", to: STDERR_FILENO)
            return 1
        }
        if reply["ok"]?.boolValue == true {
            StandardStreams.line((reply["payload"] ?? .null).jsonString(pretty: r.pretty), to: STDOUT_FILENO)
            return 0
        }
        let error = reply["error"] ?? NodeError.unavailable("malformed reply from daemon").json
        StandardStreams.line(error.jsonString(pretty: r.pretty), to: STDOUT_FILENO)
        return 1
    }
}

/// Lines to stdout and stderr with plain write(2): `print` to a pipe is buffered and lost if the
/// process is killed, and output to a reader that went away (`… | head -3`) is dropped, not fatal.
public enum StandardStreams {
    public static func line(_ s: String, to fd: Int32) {
        try? SystemIO.live.writeAll(fd, Array((s + "\n").utf8))
    }
}
