import Foundation
@testable import Support
@testable import TestSupport
import Testing

/// The launcher the package installs as /usr/bin/openclaw-node (Sources/openclaw-node-launcher):
/// `invoke` answered by a running daemon by itself, with the full program's output to the byte;
/// every other command line handed to the full program, whose process the daemon then is.
@Suite struct LauncherTests {
    /// What one command line gives, by the launcher and by the full program.
    private func both(_ node: NodeUnderTest, _ args: [String]) throws -> (launcher: ProcessResult, program: ProcessResult) {
        node.program = TestPaths.launcherBinary
        let l = try node.cli(args)
        node.program = TestPaths.nodeBinary
        return (l, try node.cli(args))
    }

    @Test func theLauncherAnswersInvokeAsTheProgramDoes() throws {
        // It loads no Swift library: the runtime is linked in.
        let ldd = try runProcess("/usr/bin/ldd", [TestPaths.launcherBinary])
        #expect(ldd.code == 0 && !ldd.stdout.contains("libswift") && !ldd.stdout.contains("libopenclaw"), "\(ldd.stdout)")

        let node = NodeUnderTest(gatewaySection: "discovery: { lan: false }")
        defer { node.cleanup() }
        try node.start()
        #expect(waitUntil(timeout: 20) { FileManager.default.fileExists(atPath: node.dir + "/state/control.sock") }, "\(node.log)")
        for args in [["invoke", "device.info"], ["invoke", "device.info", "--compact"], ["invoke", "device.info", "--params={}", "--timeout", "5000"],
                     ["invoke", "nope.nope"], ["invoke", "device.info", "--params", "{not json"], ["invoke", "device.info", "--timeout", "soon"],
                     ["invoke", "device.info", "extra"], ["invoke", "--help"], ["invoke", "device.info", "--bogus"]] {
            let r = try both(node, args)
            #expect(r.launcher.code == r.program.code && r.launcher.stdout == r.program.stdout && r.launcher.stderr == r.program.stderr,
                    "\(args): launcher \(r.launcher.code) \(r.launcher.stdout)\(r.launcher.stderr) | program \(r.program.code) \(r.program.stdout)\(r.program.stderr)")
        }
        #expect(try node.cli(["invoke", "device.info"]).stdout.contains("\"appVersion\""))

        // Alone in a folder (no program beside it), the launcher still answers through the daemon —
        // it did not hand the invoke over — and says what is wrong for anything else.
        let alone = TestPaths.tempDir("launcher")
        defer { try? FileManager.default.removeItem(atPath: alone) }
        try FileManager.default.copyItem(atPath: TestPaths.launcherBinary, toPath: alone + "/openclaw-node")
        let answered = try runProcess(alone + "/openclaw-node", ["invoke", "device.info", "--config", node.configPath], env: node.env)
        #expect(answered.code == 0 && answered.stdout.contains("\"appVersion\""), "\(answered.stdout)\(answered.stderr)")
        let status = try runProcess(alone + "/openclaw-node", ["status", "--config", node.configPath], env: node.env)
        #expect(status.code == 127 && status.stderr.contains("the node's program") && status.stderr.contains("reinstall the package"),
                "\(status.code) \(status.stderr)")
        node.stop()
        // With no daemon to ask, an invoke needs the program too.
        let noDaemon = try runProcess(alone + "/openclaw-node", ["invoke", "device.info", "--config", node.configPath], env: node.env)
        #expect(noDaemon.code == 127 && noDaemon.stderr.contains("the node's program"), "\(noDaemon.code) \(noDaemon.stderr)")
    }

    @Test func everyOtherCommandLineIsTheProgramsAndSoIsTheDaemon() throws {
        let node = NodeUnderTest(gatewaySection: "discovery: { lan: false }")
        defer { node.cleanup() }
        for args in [["--version"], ["--help"], ["status"], ["caps", "device.info"], ["nonsense"]] {
            let r = try both(node, args)
            #expect(r.launcher.code == r.program.code && r.launcher.stdout == r.program.stdout, "\(args): \(r.launcher.stdout) | \(r.program.stdout)")
        }
        // No daemon: the program runs the invoke in-process, as it always did.
        let local = try both(node, ["invoke", "device.info"])
        #expect(local.launcher.code == 0 && local.launcher.stdout == local.program.stdout, "\(local.launcher.stdout)\(local.launcher.stderr)")

        // A daemon started through the launcher is the full program's process (execv: same PID),
        // which KWin's grant names and helpers are started from; a graceful restart keeps it so.
        node.program = TestPaths.launcherBinary
        try node.start()
        let pid = try #require(node.process?.pid)
        #expect(waitUntil(timeout: 20) { FileManager.default.fileExists(atPath: node.dir + "/state/control.sock") }, "\(node.log)")
        let real = URL(fileURLWithPath: TestPaths.nodeBinary).resolvingSymlinksInPath().path
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/exe") == real)
        #expect(try String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8) == "openclaw-node\n")
        let restart = try node.cli(["restart", "--wait", "--json"])
        #expect(restart.code == 0, "\(restart.stdout)\(restart.stderr)")
        #expect(node.log.contains("nothing runs: restarting now"), "\(node.log.suffix(1500))")
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/exe") == real)
        #expect(try node.cli(["invoke", "device.info"]).code == 0)
        #expect(node.stop() == 0)
    }

    /// The installed layout: bin/openclaw-node (the launcher) finds lib/openclaw-node/openclaw-node.
    @Test func theInstalledLayoutIsFound() throws {
        let prefix = TestPaths.tempDir("prefix")
        defer { try? FileManager.default.removeItem(atPath: prefix) }
        try FileManager.default.createDirectory(atPath: prefix + "/bin", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: prefix + "/lib/openclaw-node", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: TestPaths.launcherBinary, toPath: prefix + "/bin/openclaw-node")
        // The program by a link (its core and bundles stay where it was built).
        try FileManager.default.createSymbolicLink(atPath: prefix + "/lib/openclaw-node/openclaw-node", withDestinationPath: TestPaths.nodeBinary)
        let r = try runProcess(prefix + "/bin/openclaw-node", ["--version"])
        let direct = try runProcess(TestPaths.nodeBinary, ["--version"])
        #expect(r.code == 0 && r.stdout == direct.stdout && !r.stdout.isEmpty, "\(r.stdout)\(r.stderr)")
    }
}
