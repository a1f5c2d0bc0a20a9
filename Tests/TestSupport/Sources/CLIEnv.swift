import Foundation

/// A private home, config and state directory for running the real `openclaw-node` binary once per
/// command (`e.run(["caps", "--config", e.config])`), removed by `cleanup()`.
struct CLIEnv {
    let dir: String
    let config: String
    var vars: [String: String] {
        ["HOME": dir, "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin", "XDG_CONFIG_HOME": dir + "/xdg",
         "TMPDIR": NSTemporaryDirectory()]
    }
    init(_ body: String = "") {
        dir = TestPaths.tempDir("cli")
        config = dir + "/config.json5"
        let text = "{ node: { stateDir: '\(dir)/state' }, presence: { mode: 'manual' }, \(body) }"
        _ = FileManager.default.createFile(atPath: config, contents: Data(text.utf8))
    }
    func run(_ args: [String]) throws -> ProcessResult { try runProcess(TestPaths.nodeBinary, args, env: vars) }
    func cleanup() { try? FileManager.default.removeItem(atPath: dir) }
}
