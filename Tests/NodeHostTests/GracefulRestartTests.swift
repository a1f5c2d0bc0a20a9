import Foundation
@testable import Support
@testable import TestSupport
import Testing

/// `openclaw-node restart` (what the package's upgrade runs): the daemon restarts only after the
/// invoke in flight — a long system.run — has finished and answered; it comes back in the same
/// process with the same device id, and the gateway sees one reconnect presenting the stored
/// device token, no new pairing. The secrets it was started with (OPENCLAW_GATEWAY_TOKEN in its
/// environment, withheld from children) survive the restart.
@Suite(.serialized) struct GracefulRestartTests {
    @Test func restartWaitsForTheInvokeInFlightAndKeepsIdentityAndToken() throws {
        let gw = try TestGateway(stateFile: TestPaths.tempDir("gw") + "/gw.json", args: ["--auto-approve"]); defer { gw.stop() }
        let node = NodeUnderTest(gatewayURL: gw.url, extra: "capabilities: { system: { enabled: true } }"); defer { node.cleanup() }
        node.extraEnv = ["OPENCLAW_GATEWAY_TOKEN": "shared-secret-1"]
        try node.start()
        let first = try #require(gw.waitFor("hello"), "\(node.log)")
        #expect(first["issuedToken"] == true)
        let before = try #require(try node.status(), "\(node.log)")
        let pid = node.process!.pid

        // A command that takes 3 s, in flight when the restart is asked for.
        let marker = node.dir + "/finished"
        let params: JSONValue = ["command": .array(["/bin/sh", "-c", .string("sleep 3; echo done > '\(marker)'")])]
        gw.command(["cmd": "invoke", "id": "long-1", "command": "system.run", "timeoutMs": 60_000, "paramsJSON": .string(params.jsonString())])
        #expect(waitUntil(timeout: 10) { node.log.contains("system.run") }, "\(node.log)")
        let asked = try node.cli(["restart", "--reason", "test upgrade"])
        #expect(asked.code == 0 && asked.stdout.contains("waiting for invoke system.run"), "\(asked.stdout)\(asked.stderr)")
        let pending = try #require(try node.status())
        #expect(pending["daemon"]?["restartPending"]?["reason"] == "test upgrade" || pending["restartPending"]?["reason"] == "test upgrade", "\(pending)")

        // The command finishes and its answer reaches the gateway before the node goes.
        let result = try #require(gw.waitFor("invoke_result", timeout: 20) { $0["id"] == "long-1" }, "\(node.log)")
        #expect(result["ok"] == true, "\(result)")
        #expect(FileManager.default.fileExists(atPath: marker))
        let connects = gw.all("connect").count
        let again = try #require(gw.waitFor("hello", timeout: 30), "\(node.log)")  // the next hello: the first was taken above
        #expect(again["auth"] == ["deviceToken"], "\(again)")
        #expect(gw.all("pairing_requested").count <= 1)
        #expect(gw.all("connect").count == connects + 1, "more than one reconnect: \(gw.all("connect").count - connects)")

        // The same process, the same identity; the log says why it restarted.
        #expect(node.process!.pid == pid && node.isRunning)
        let after = try #require(try node.status(), "\(node.log)")
        #expect(after["deviceId"] == before["deviceId"] && after["deviceId"] != nil, "\(before) \(after)")
        #expect(node.log.contains("restart asked for (test upgrade)") && node.log.contains("nothing runs: restarting now"), "\(node.log)")
        let order = node.log.range(of: "stopping to restart")?.lowerBound
        let finished = node.log.range(of: "system.run")?.lowerBound
        #expect(order != nil && finished != nil && finished! < order!)
        // After the restart the node works as before.
        #expect(gw.invoke("device.info")?["ok"] == true)
        #expect(node.stop() == 0)
        #expect(gw.schemaErrors.isEmpty, "\(gw.schemaErrors)")
    }

    /// `restart --wait` returns once the restarted daemon answers, not before: it waits for the
    /// old daemon to close its connection (the restart itself closes it). The control socket here
    /// drops a connection idle for 1 s while the invoke in flight takes 3 s, so the command also
    /// takes the path where the old daemon still answers and a fresh connection is held.
    @Test func restartWaitReturnsWhenTheRestartedDaemonAnswers() throws {
        let gw = try TestGateway(stateFile: TestPaths.tempDir("gw") + "/gw.json", args: ["--auto-approve"]); defer { gw.stop() }
        let node = NodeUnderTest(gatewayURL: gw.url, extra: "capabilities: { system: { enabled: true } }"); defer { node.cleanup() }
        node.extraEnv = ["OPENCLAW_NODE_CONTROL_IDLE_SECONDS": "1"]
        try node.start()
        #expect(gw.waitFor("hello") != nil, "\(node.log)")
        let params: JSONValue = ["command": ["/bin/sh", "-c", "sleep 3"]]
        gw.command(["cmd": "invoke", "id": "long-2", "command": "system.run", "timeoutMs": 60_000, "paramsJSON": .string(params.jsonString())])
        #expect(waitUntil(timeout: 10) { node.log.contains("system.run") }, "\(node.log)")
        let r = try node.cli(["restart", "--wait", "--json"])
        #expect(r.code == 0, "\(r.stdout)\(r.stderr)\n\(node.log.suffix(1500))")
        // When it returned, the command had answered and the daemon had restarted in place.
        #expect(gw.all("invoke_result").contains { $0["id"] == "long-2" && $0["ok"] == true })
        #expect(node.log.contains("nothing runs: restarting now"), "\(node.log.suffix(1500))")
        let back = try #require(JSONValue.parse(r.stdout), "\(r.stdout)")
        #expect(back["pid"]?.intValue == Int(node.process!.pid), "\(back)")
        #expect(node.stop() == 0)
    }

    @Test func withoutADaemonItSaysSo() throws {
        let e = CLIEnv(); defer { e.cleanup() }
        let r = try e.run(["restart", "--config", e.config])
        #expect(r.code == 1 && r.stderr.contains("no running daemon"), "\(r.stderr)")
    }
}
