@testable import Config
import Foundation
@testable import HostPresence
@testable import Kit
@testable import NodeCLI
@testable import Registry
@testable import Store
@testable import Support

/// Runs a program to completion and captures its output (for CLI end-to-end tests).
struct ProcessResult {
    let code: Int32
    let stdout: String
    let stderr: String
}

enum TestPaths {
    /// The built `openclaw-node` next to the test bundle (the test target depends on it).
    static var nodeBinary: String {
        let dir = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for candidate in [dir, dir.deletingLastPathComponent()] {
            let p = candidate.appendingPathComponent("openclaw-node").path
            if FileManager.default.isExecutableFile(atPath: p) { return p }
        }
        return repoRoot + "/.build/debug/openclaw-node"
    }

    /// The built launcher beside it (what the package installs as /usr/bin/openclaw-node).
    static var launcherBinary: String {
        URL(fileURLWithPath: nodeBinary).deletingLastPathComponent().appendingPathComponent("openclaw-node-launcher").path
    }

    static var repoRoot: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().path
    }

    /// A fresh private directory, removed by the caller's `defer` — or, at the latest, when the test
    /// process exits (a gateway's state directory outlives one TestGateway when a test restarts it,
    /// so not every caller can remove it early).
    static func tempDir(_ tag: String = "t") -> String {
        let p = NSTemporaryDirectory() + "ocn-\(tag)-\(UUID().uuidString.prefix(8))"
        try? FileManager.default.createDirectory(atPath: p, withIntermediateDirectories: true)
        TempDirs.register(p)
        return p
    }
}

/// Every directory tempDir made, removed at exit so a run leaves nothing in /tmp.
enum TempDirs {
    private static let lock = NSLock()
    nonisolated(unsafe) private static var made: [String] = []
    private static let installed: Void = { atexit { TempDirs.removeAll() } }()

    static func register(_ path: String) {
        _ = installed
        lock.withLock { made.append(path) }
    }

    static func removeAll() {
        for p in lock.withLock({ made }) { try? FileManager.default.removeItem(atPath: p) }
    }
}

func runProcess(_ path: String, _ args: [String], env: [String: String]? = nil, stdin: String? = nil,
                timeout: TimeInterval = 60) throws -> ProcessResult {
    let p = try Subprocess.spawn(path, args, environment: env, stdin: .pipe, stdout: .pipe, stderr: .pipe)
    if let stdin { try? p.stdin?.write(Data(stdin.utf8)) }
    p.stdin?.close()
    // Read both pipes concurrently so a chatty child cannot block on a full pipe.
    let outData = LockedData(), errData = LockedData()
    let g = DispatchGroup()
    g.enter(); DispatchQueue.global().async { outData.set(Data(p.stdout!.readDataToEndOfFile())); g.leave() }
    g.enter(); DispatchQueue.global().async { errData.set(Data(p.stderr!.readDataToEndOfFile())); g.leave() }
    let deadline = Date().addingTimeInterval(timeout)
    while p.isRunning && Date() < deadline { usleep(5_000) }
    if p.isRunning { kill(p.pid, SIGKILL) }
    let code = p.wait()
    g.wait()
    return ProcessResult(code: code, stdout: String(decoding: outData.get(), as: UTF8.self),
                         stderr: String(decoding: errData.get(), as: UTF8.self))
}

final class LockedData: @unchecked Sendable {
    private let lock = NSLock()
    private var data = Data()
    func set(_ d: Data) { lock.withLock { data = d } }
    func get() -> Data { lock.withLock { data } }
}

/// A child process that runs in the background during a test and is stopped by its PID.
final class BackgroundProcess: @unchecked Sendable {
    let child: Subprocess
    let logPath: String

    init(_ path: String, _ args: [String], env: [String: String]? = nil) throws {
        logPath = NSTemporaryDirectory() + "ocn-bg-\(UUID().uuidString.prefix(8)).log"
        child = try Subprocess.spawn(path, args, environment: env, stdin: .null, stdout: .file(logPath), stderr: .file(logPath))
    }

    var pid: Int32 { child.pid }
    var isRunning: Bool { child.isRunning }
    var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// SIGTERM, then SIGKILL if it has not exited within `grace`.
    @discardableResult
    func stop(grace: TimeInterval = 5) -> Int32 { child.terminate(grace: .milliseconds(Int(grace * 1000))) }

    deinit {
        child.terminate(grace: .seconds(2))
        try? FileManager.default.removeItem(atPath: logPath)
    }
}

/// Polls `condition` until it holds or `timeout` passes.
func waitUntil(timeout: TimeInterval = 10, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        if condition() { return true }
        usleep(20_000)
    }
    return condition()
}
