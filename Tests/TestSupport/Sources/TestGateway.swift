@testable import Config
import ControlLink
import Foundation
@testable import HostPresence
@testable import Kit
@testable import NodeCLI
@testable import Registry
@testable import Store
@testable import Support

/// Tests/gateway/test_gateway.py, started for one test: a protocol-faithful gateway that validates
/// every frame the node sends against the upstream JSON schema.
final class TestGateway: @unchecked Sendable {
    let server: PythonServer
    let stateFile: String
    private let lock = NSLock()
    private var seen: [JSONValue] = []
    private var consumed = Set<Int>()

    /// `port: 0` picks a free port; pass the previous port to "restart" the same gateway.
    init(port: Int = 0, stateFile: String, args: [String] = []) throws {
        self.stateFile = stateFile
        var a = ["--port", String(port), "--state", stateFile]
        a += args
        var lastError: Error?
        for _ in 0..<50 {
            do {
                server = try PythonServer(script: "test_gateway.py", args: a)
                return
            } catch {
                // The old process may still hold the port for a moment after a kill.
                lastError = error
                usleep(100_000)
            }
        }
        throw lastError!
    }

    var port: Int { server.port }
    var url: String { (server.ready["fingerprint"]?.stringValue != nil ? "wss" : "ws") + "://127.0.0.1:\(port)" }
    var fingerprint: String? { server.ready["fingerprint"]?.stringValue }

    func command(_ c: JSONValue) { server.send(c.jsonString()) }

    /// Takes what the gateway printed: waits up to `timeout` for a first line, then takes every
    /// line already there (a chatty gateway — realtime talk's 25 audio frames a second — must not
    /// be read one line per scan of everything seen).
    private func drain(timeout: TimeInterval) {
        guard let first = server.nextLine(timeout: timeout) else { return }
        var lines = [first]
        while lines.count < 10_000, let more = server.nextLine(timeout: 0) { lines.append(more) }
        let parsed = lines.compactMap(JSONValue.parse)
        lock.withLock { seen += parsed }
    }

    /// The first not-yet-consumed event matching `predicate`, waiting up to `timeout`.
    func waitFor(_ event: String, timeout: TimeInterval = 20, where predicate: (JSONValue) -> Bool = { _ in true }) -> JSONValue? {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let hit: JSONValue? = lock.withLock {
                for (i, v) in seen.enumerated() where !consumed.contains(i) && v["event"]?.stringValue == event && predicate(v) {
                    consumed.insert(i)
                    return v
                }
                return nil
            }
            if let hit { return hit }
            let left = deadline.timeIntervalSinceNow
            if left <= 0 { return nil }
            drain(timeout: min(left, 0.5))
        }
    }

    /// Every event seen so far with this name (after draining what is already printed).
    func all(_ event: String) -> [JSONValue] {
        // What is printed by now: a gateway that never pauses for 50 ms (realtime talk's audio
        // frames) must not keep this reading for ever.
        let until = Date().addingTimeInterval(0.3)
        while Date() < until, let line = server.nextLine(timeout: 0.05), let v = JSONValue.parse(line) { lock.withLock { seen.append(v) } }
        return lock.withLock { seen.filter { $0["event"]?.stringValue == event } }
    }

    /// Schema violations in frames the node sent (must stay empty).
    var schemaErrors: [JSONValue] { all("schema_error") }

    func invoke(_ command: String, id: String = UUID().uuidString.lowercased(), paramsJSON: String? = nil,
                timeoutMs: Int? = nil, wait: TimeInterval = 20) -> JSONValue? {
        var c: [String: JSONValue] = ["cmd": "invoke", "id": .string(id), "command": .string(command)]
        if let paramsJSON { c["paramsJSON"] = .string(paramsJSON) }
        if let timeoutMs { c["timeoutMs"] = .number(Double(timeoutMs)) }
        self.command(.object(c))
        return waitFor("invoke_result", timeout: wait) { $0["id"]?.stringValue == id }
    }

    func kill9() {
        kill(server.pid, SIGKILL)
        server.stop()
    }

    func stop() { server.stop() }
}

/// Waits until the daemon `p` serves its control socket in `stateDir` (a connection is accepted:
/// the socket's file is there from its bind(), a moment before it listens), or has exited; true
/// when it serves. A test that then runs `openclaw-node invoke` reaches the daemon, instead of the
/// CLI running the command in its own process as it does when no daemon answers.
@discardableResult
func waitForDaemon(stateDir: String, _ p: BackgroundProcess, timeout: TimeInterval = 60) -> Bool {
    var serving = false
    _ = waitUntil(timeout: timeout) {
        if let s = try? UnixSocket.connect(stateDir + "/control.sock") { s.close(); serving = true; return true }
        return !p.isRunning
    }
    return serving
}

/// A running `openclaw-node run` against some gateway, with its own stateDir and config.
final class NodeUnderTest: @unchecked Sendable {
    let dir: String
    let configPath: String
    private(set) var process: BackgroundProcess?

    /// Extra environment for the node and its CLI (e.g. DBUS_SYSTEM_BUS_ADDRESS of a private bus).
    var extraEnv: [String: String] = [:]
    /// The program `start` and `cli` run: the full program, or the launcher in front of it.
    var program = TestPaths.nodeBinary

    convenience init(gatewayURL: String, extraGateway: String = "", extra: String = "") {
        self.init(gatewaySection: "url: '\(gatewayURL)', \(extraGateway)", extra: extra)
    }

    /// The whole inside of `gateway: { … }` (no url = discovery).
    init(gatewaySection: String, extra: String = "") {
        dir = TestPaths.tempDir("node")
        configPath = dir + "/config.json5"
        rewriteConfig(gatewaySection: gatewaySection, extra: extra)
    }

    /// Writes the config file again (a reload test edits it under the running node).
    func rewriteConfig(gatewaySection: String, extra: String = "") {
        let text = """
            { gateway: { \(gatewaySection) },
              node: { stateDir: '\(dir)/state', displayName: 'Test Node' },
              presence: { mode: 'manual' }, \(extra) }
            """
        _ = FileManager.default.createFile(atPath: configPath, contents: Data(text.utf8))
    }

    var env: [String: String] {
        // TMPDIR: what the node and its children (Chromium, libpulse) leave there goes with the run's.
        ["HOME": dir, "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin", "OPENCLAW_NODE_LOG": "debug",
         "TMPDIR": NSTemporaryDirectory()]
            .merging(extraEnv) { _, new in new }
    }

    /// Starts the daemon and returns once its control socket accepts a connection, or once it
    /// has exited (a test of a start that fails reads why from its log). `openclaw-node invoke`
    /// runs the command in-process when no daemon answers, as a user's would: a test that invokes
    /// right after start must reach the daemon, not race its start-up on a busy machine.
    func start() throws {
        let p = try BackgroundProcess(program, ["run", "--config", configPath], env: env)
        process = p
        _ = waitForDaemon(stateDir: dir + "/state", p)
    }

    @discardableResult
    func stop() -> Int32? { defer { process = nil }; return process?.stop() }

    var log: String { process?.log ?? "" }
    var isRunning: Bool { process?.isRunning ?? false }

    func cli(_ args: [String]) throws -> ProcessResult {
        try runProcess(program, args + ["--config", configPath], env: env)
    }

    func status() throws -> JSONValue? { JSONValue.parse(try cli(["status", "--json"]).stdout) }

    func cleanup() {
        stop()
        try? FileManager.default.removeItem(atPath: dir)
    }
}
