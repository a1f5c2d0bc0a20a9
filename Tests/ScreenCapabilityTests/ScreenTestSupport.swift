@testable import Config
import Foundation
@testable import HostPresence
@testable import Kit
import Media
@testable import NodeCLI
@testable import Registry
@testable import ScreenCapability
@testable import Store
@testable import Support
@testable import TestSupport
import Testing

enum ScreenTest {
    static let bigPayload = 25 * 1024 * 1024

    static func capability(display: String, shm: Bool = true) -> ScreenCapability {
        ScreenCapability(settings: ScreenSettings(backend: .x11, display: display, useSharedMemory: shm))
    }

    /// Invokes through the command's real params decoder (the dispatcher's path after its gates).
    static func invoke(_ cap: ScreenCapability, _ command: ScreenCommand, _ params: String = "{}",
                       maxPayload: Int = bigPayload, timeoutMs: Int? = nil) async throws(NodeError) -> JSONValue {
        try await runCommand(cap, command.rawValue, params, deadline: timeoutMs.map { ContinuousClock.now + .milliseconds($0) },
                             maxPayloadBytes: maxPayload)
    }

    /// Starts a long screen.record (20 s), cancels it after 0.5 s: it must end as CANCELLED, long
    /// before the recording would have (within 10 s: room for a busy machine).
    static func expectRecordingCancelsPromptly(_ cap: ScreenCapability, _ params: String) async throws {
        let task = Task { () async throws(NodeError) -> JSONValue in try await invoke(cap, .record, params) }
        try await Task.sleep(for: .milliseconds(500))
        let cancelledAt = ContinuousClock.now
        task.cancel()
        let result = await task.result
        #expect(ContinuousClock.now - cancelledAt < .seconds(10))
        guard case .failure(let e) = result else { Issue.record("a cancelled recording must not succeed"); return }
        #expect((e as? NodeError)?.code == "CANCELLED")
    }

    /// A config file for the CLI tests (capabilities.screen plus a private stateDir).
    static func config(in dir: String, screen: String) -> String {
        let path = dir + "/config.json5"
        let text = "{ node: { stateDir: '\(dir)/state' }, presence: { mode: 'always' }, capabilities: { screen: { \(screen) } } }"
        _ = FileManager.default.createFile(atPath: path, contents: Data(text.utf8))
        return path
    }
}

/// Tests/fakes/fakefb.c built once per test run with the system C compiler.
enum FakeFramebuffer {
    static let library: Result<String, TestFailure> = {
        let dir = TestPaths.tempDir("fakefb")
        let out = dir + "/libfakefb.so"
        guard let r = try? runProcess("/usr/bin/cc", ["-shared", "-fPIC", "-O2", "-Wall", "-o", out,
                                                     TestPaths.repoRoot + "/Tests/fakes/fakefb.c", "-ldl"]),
              r.code == 0 else { return .failure(TestFailure("cc could not build fakefb.c")) }
        return .success(out)
    }()


    /// Environment for a node process that sees the fake at `path`.
    static func environment(path: String, bpp: Int, width: Int = 320, height: Int = 240, home: String) throws -> [String: String] {
        ["LD_PRELOAD": try library.get(), "FAKEFB_PATH": path, "FAKEFB_BPP": String(bpp),
         "FAKEFB_WIDTH": String(width), "FAKEFB_HEIGHT": String(height), "HOME": home,
         "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"]
    }
}
