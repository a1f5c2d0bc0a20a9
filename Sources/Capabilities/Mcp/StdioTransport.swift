import Glibc
import Kit
import Support

/// An MCP server as a child process speaking newline-delimited JSON-RPC on stdin/stdout (the MCP
/// stdio transport). It runs in its own process group with an environment made from scratch (no
/// gateway token, nothing of the daemon's but PATH, HOME, locale and the like, plus the server's
/// own `env`), optionally under bubblewrap; its stderr goes to the log, paced. Stopping it closes
/// stdin, then SIGTERM to the group, then SIGKILL — what the MCP specification asks of a client.
final class StdioTransport: McpTransport, @unchecked Sendable {
    /// The longest message read from a server: a result of the largest size the call caps allow
    /// (20 MiB of content) with room for JSON escaping; a longer line is dropped and counted.
    static let maxLineBytes = 48 << 20
    /// Lines a server may write per second before the node reads it at that pace.
    static let linesPerSecond: Double = 2_000

    private let config: McpServerConfig
    private let command: String, args: [String], env: [String: String], cwd: String
    private let sandbox: Sandbox
    private let log: Logger
    private let child = Locked<Subprocess?>(nil)
    private let writeLock = Locked(())

    init(config: McpServerConfig, command: String, args: [String], env: [String: String], cwd: String, sandbox: Sandbox, log: Logger) {
        self.config = config; self.command = command; self.args = args; self.env = env; self.cwd = cwd
        self.sandbox = sandbox; self.log = log
    }

    /// The environment a server starts with: the daemon's (already without the gateway secrets)
    /// reduced to what programs expect to find, then the server's own variables.
    static func environment(base: [String: String], extra: [String: String]) -> [String: String] {
        let kept = ["PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "TZ", "TERM", "TMPDIR", "XDG_RUNTIME_DIR"]
        var out: [String: String] = [:]
        for (k, v) in base where kept.contains(k) || k.hasPrefix("LC_") { out[k] = v }
        if out["PATH"] == nil { out["PATH"] = Sandbox.searchPath }
        for (k, v) in extra { out[k] = v }
        return out
    }

    func start(receive: @escaping @Sendable (JSONValue) -> Void, closed: @escaping @Sendable (String) -> Void) async throws(McpFailure) {
        guard let executable = command.contains("/") ? (Subprocess.isExecutableFile(command) ? command : nil)
                : Subprocess.findExecutable(command, path: env["PATH"]) else {
            throw .disconnected("cannot start \(command): no such executable\(command.contains("/") ? "" : " on PATH")")
        }
        var program = (executable: executable, argv: [executable] + args)
        // sandboxNetwork: false — no network and no Unix socket (a session bus would reach
        // systemd-run --user outside the sandbox): the same seccomp filter as system.run's.
        var seccomp: Int32? = nil
        if sandbox.needsSeccomp {
            guard let fd = UnixSocketFilter.descriptor() else { throw .disconnected("sandbox: the Unix-socket filter cannot be built on this machine") }
            seccomp = fd
        }
        defer { if let seccomp { Glibc.close(seccomp) } }
        if sandbox.kind == .bwrap {
            switch sandbox.wrap(executable: executable, argv: program.argv, cwd: cwd, seccompFD: seccomp.map { _ in 3 }) {
            case .success(let wrapped): program = wrapped
            case .failure(let refused): throw .disconnected("sandbox: \(refused.message)")
            }
        }
        // Under the node's process-tree reaper: what the server starts — a setsid child too — ends
        // when the server does, and when the node does.
        if let reaped = ProcessTreeReaper.wrap(program.executable, Array(program.argv.dropFirst()), killOrphans: true) {
            program = (reaped.executable, [reaped.executable] + reaped.arguments)
        }
        // Spawned from the thread that then reads its stdout for as long as it runs: the reaper's
        // parent-death signal fires when the spawning *thread* ends, and a cooperative-pool thread
        // ends when idle (a server was killed seconds after it started).
        let (exe, argv, env, cwd) = (program.executable, Array(program.argv.dropFirst()), env, cwd)
        let fds: [Int32: Int32] = seccomp.map { [3: $0] } ?? [:]
        let log = self.log
        let started: Result<Subprocess, McpFailure> = await withCheckedContinuation { (c: CheckedContinuation<Result<Subprocess, McpFailure>, Never>) in
            BlockingExecutor.startLoop(name: "mcp-stdout") {
                let p: Subprocess
                do {
                    p = try Subprocess.spawn(exe, argv, environment: env, stdin: .pipe, stdout: .pipe, stderr: .pipe,
                                             newProcessGroup: true, extraFDs: fds, workingDirectory: cwd)
                } catch {
                    c.resume(returning: .failure(.disconnected("\(error)")))
                    return
                }
                c.resume(returning: .success(p))
                Self.readMessages(p, receive: receive, closed: closed, log: log)
            }
        }
        let p = try started.get()
        child.withLock { $0 = p }
        log.info("started \(command) (pid \(p.pid)\(sandbox.kind == .bwrap ? ", under bubblewrap" : ""))")
        BlockingExecutor.startLoop(name: "mcp-stderr") {
            var lines = LineSplitter(maxLineBytes: 16 * 1024)
            var pace = RateLimiter(perSecond: 20, burst: 100)
            while let chunk = p.stderr?.availableData, !chunk.isEmpty {
                for line in lines.take(chunk) where !line.isEmpty {
                    if pace.allow() { log.info("stderr: \(line.prefix(2000))") }
                    else if let n = pace.takeDropped() { log.warn("dropped \(n) stderr lines: the server logs more than 20 per second") }
                }
            }
        }
    }

    /// The server's stdout, one JSON-RPC message a line, until it ends; then its exit.
    private static func readMessages(_ p: Subprocess, receive: @escaping @Sendable (JSONValue) -> Void,
                                     closed: @escaping @Sendable (String) -> Void, log: Logger) {
        var lines = LineSplitter(maxLineBytes: Self.maxLineBytes)
        var pace = RateLimiter(perSecond: Self.linesPerSecond, burst: Self.linesPerSecond)
        while let chunk = p.stdout?.availableData, !chunk.isEmpty {
            for line in lines.take(chunk) where !line.isEmpty {
                // Pacing, not dropping: the pipe fills and the server waits in write(2).
                while !pace.allow() { Pause.for(.milliseconds(max(1, pace.untilNextToken.milliseconds))) }
                if let v = JSONValue.parse(line) { receive(v) }
                else { log.warn("stdout line is not JSON (stdout is for MCP messages only; log to stderr): \(line.prefix(200))") }
            }
            if lines.dropped > 0 { log.warn("dropped \(lines.dropped) message(s) longer than \(Self.maxLineBytes >> 20) MiB"); lines.dropped = 0 }
        }
        let status = p.wait()
        closed(Self.exitText(status))
    }

    func send(_ message: JSONValue) async throws(McpFailure) {
        guard let p = child.withLock({ $0 }), let stdin = p.stdin else { throw .disconnected("the server is not running") }
        let bytes = Array((message.jsonString() + "\n").utf8)
        // One writer at a time, so two messages never interleave on the pipe; off the actor's
        // thread, since a server that does not read makes write(2) wait.
        let result: Result<Void, McpFailure> = await BlockingExecutor.run("mcp-stdin") { [writeLock] (_: CancelFlag) -> Result<Void, McpFailure> in
            writeLock.withLock { _ in
                do throws(PipeEnd.WriteError) { try stdin.write(bytes); return .success(()) }
                catch { return .failure(.disconnected("the server stopped reading: \(error.description)")) }
            }
        }
        try result.get()
    }

    func negotiated(protocolVersion: String) async {}

    func close() async {
        guard let p = child.withLock({ c -> Subprocess? in defer { c = nil }; return c }) else { return }
        await BlockingExecutor.run("mcp-stop") { (_: CancelFlag) in
            p.stdin?.close()
            if p.waitForExit(within: .seconds(2)) { return }
            kill(-p.pid, SIGTERM)
            if p.waitForExit(within: .seconds(3)) { return }
            kill(-p.pid, SIGKILL)
            _ = p.waitForExit(within: .seconds(2))
        }
        // Whatever it left behind in its group (a shell's children) goes with it.
        kill(-p.pid, SIGKILL)
    }

    var endpoint: String { get async { child.withLock { $0.map { "pid \($0.pid)" } } ?? "not running" } }

    static func exitText(_ status: Int32) -> String {
        // Subprocess.wait gives the exit code, or 128 + the signal number for a signalled child.
        status > 128 ? "the server was killed by signal \(status - 128)" : "the server exited with status \(status)"
    }
}
