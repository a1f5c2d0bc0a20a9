import Foundation

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
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        return root.appendingPathComponent(".build/debug/openclaw-node").path
    }

    static var repoRoot: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().path
    }

    /// A fresh private directory, removed by the caller's `defer`.
    static func tempDir(_ tag: String = "t") -> String {
        let p = NSTemporaryDirectory() + "ocn-\(tag)-\(UUID().uuidString.prefix(8))"
        try? FileManager.default.createDirectory(atPath: p, withIntermediateDirectories: true)
        return p
    }
}

func runProcess(_ path: String, _ args: [String], env: [String: String]? = nil, stdin: String? = nil,
                timeout: TimeInterval = 60) throws -> ProcessResult {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: path)
    p.arguments = args
    if let env { p.environment = env }
    let out = Pipe(), err = Pipe()
    p.standardOutput = out
    p.standardError = err
    let inPipe = Pipe()
    p.standardInput = inPipe
    try p.run()
    if let stdin { inPipe.fileHandleForWriting.write(Data(stdin.utf8)) }
    try? inPipe.fileHandleForWriting.close()
    // Read both pipes concurrently so a chatty child cannot block on a full pipe.
    let outData = LockedData(), errData = LockedData()
    let g = DispatchGroup()
    g.enter(); DispatchQueue.global().async { outData.set(out.fileHandleForReading.readDataToEndOfFile()); g.leave() }
    g.enter(); DispatchQueue.global().async { errData.set(err.fileHandleForReading.readDataToEndOfFile()); g.leave() }
    let deadline = Date().addingTimeInterval(timeout)
    while p.isRunning && Date() < deadline { usleep(10_000) }
    if p.isRunning { kill(p.processIdentifier, SIGKILL) }
    p.waitUntilExit()
    g.wait()
    return ProcessResult(code: p.terminationStatus, stdout: String(decoding: outData.get(), as: UTF8.self),
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
    let process = Process()
    let stderrPath: String

    init(_ path: String, _ args: [String], env: [String: String]? = nil) throws {
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = args
        if let env { process.environment = env }
        stderrPath = NSTemporaryDirectory() + "ocn-bg-\(UUID().uuidString.prefix(8)).log"
        FileManager.default.createFile(atPath: stderrPath, contents: nil)
        let h = FileHandle(forWritingAtPath: stderrPath)
        process.standardError = h
        process.standardOutput = h
        process.standardInput = FileHandle.nullDevice
        try process.run()
    }

    var pid: Int32 { process.processIdentifier }
    var log: String { (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? "" }

    /// SIGTERM, then SIGKILL if it has not exited within `grace`.
    @discardableResult
    func stop(grace: TimeInterval = 5) -> Int32 {
        if process.isRunning { kill(pid, SIGTERM) }
        let deadline = Date().addingTimeInterval(grace)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        if process.isRunning { kill(pid, SIGKILL) }
        process.waitUntilExit()
        return process.terminationStatus
    }

    deinit {
        if process.isRunning { kill(pid, SIGKILL); process.waitUntilExit() }
        try? FileManager.default.removeItem(atPath: stderrPath)
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
