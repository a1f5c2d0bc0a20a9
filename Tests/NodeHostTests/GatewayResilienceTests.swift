@testable import Config
import Foundation
@testable import HostPresence
@testable import Kit
@testable import NodeCLI
@testable import Registry
@testable import Store
@testable import Support
@testable import TestSupport
import Testing

/// Reconnects, refusals, liveness and hostile frames, with the real binary and the test gateway.
@Suite(.serialized) struct GatewayResilienceTests {
    func stateFile() -> String { TestPaths.tempDir("gw") + "/gateway.json" }

    @Test func gatewayRestartUnderLoadAndManyKillCycles() throws {
        let state = stateFile()
        var gw = try TestGateway(stateFile: state, args: ["--auto-approve", "--tick-ms", "200"])
        let port = gw.port
        let node = NodeUnderTest(gatewayURL: gw.url)
        defer { node.cleanup() }
        // What is tested is what each reconnect keeps, not how long the node waits before it: a
        // 0.1 s first step instead of OpenClaw's 1 s makes the 100 cycles 100 s shorter.
        node.extraEnv = ["OPENCLAW_NODE_RECONNECT_INITIAL_MS": "100"]
        try node.start()
        _ = try #require(gw.waitFor("hello"), "node log:\n\(node.log)")
        let token = try #require(try node.status()?["gateways"]?.arrayValue?.first?["hasDeviceToken"])
        #expect(token == true)

        // Invokes in flight when the gateway dies.
        for i in 0..<20 { gw.command(["cmd": "invoke", "id": .string("load-\(i)"), "command": "device.status"]) }
        gw.kill9()
        gw = try TestGateway(port: port, stateFile: state, args: ["--auto-approve", "--tick-ms", "200"])
        let back = try #require(gw.waitFor("hello", timeout: 30), "node log:\n\(node.log)")
        #expect(back["auth"] == ["deviceToken"])
        #expect(gw.invoke("device.info")?["ok"] == true)

        // 100 kill/restart cycles: never a lost token, never a crash, never a new pairing.
        var pairings = 0
        for cycle in 0..<100 {
            gw.kill9()
            gw = try TestGateway(port: port, stateFile: state, args: ["--auto-approve", "--tick-ms", "200"])
            guard let h = gw.waitFor("hello", timeout: 40) else {
                Issue.record("cycle \(cycle): no reconnect\n\(node.log.suffix(3000))")
                break
            }
            if h["auth"] != ["deviceToken"] { Issue.record("cycle \(cycle): connected with \(h["auth"] ?? nil)") }
            pairings += gw.all("pairing_requested").count
            // Stay long enough to count as a stable connection (one tick), then kill again.
            usleep(250_000)
        }
        #expect(pairings == 0)
        #expect(node.isRunning)
        #expect(gw.invoke("device.status")?["ok"] == true)
        #expect(gw.schemaErrors.isEmpty, "\(gw.schemaErrors)")
        gw.stop()
    }

    @Test func wrongTLSPinIsRefusedAndNeverRetried() throws {
        let cert = try TestCertificate(); defer { cert.remove() }
        let gw = try TestGateway(stateFile: stateFile(), args: ["--auto-approve", "--cert", cert.certPath, "--key", cert.keyPath])
        defer { gw.stop() }
        let node = NodeUnderTest(gatewayURL: gw.url, extraGateway: "tlsFingerprint: 'sha256:\(String(repeating: "00", count: 32))'")
        defer { node.cleanup() }
        try node.start()
        #expect(waitUntil(timeout: 15) { node.log.contains("does not match the pinned fingerprint") }, "\(node.log)")
        #expect(node.log.contains(try #require(gw.fingerprint)))
        usleep(1_500_000)
        #expect(gw.all("connect").isEmpty)
        let st = try #require(try node.status())
        #expect(st["daemon"]?["connection"]?.stringValue?.hasPrefix("paused:") == true)
        #expect(node.isRunning)
    }

    @Test func trustOnFirstUsePinsAndRefusesAnotherCertificate() throws {
        let state = stateFile()
        let cert = try TestCertificate(); defer { cert.remove() }
        var gw = try TestGateway(stateFile: state, args: ["--auto-approve", "--cert", cert.certPath, "--key", cert.keyPath])
        let port = gw.port
        let node = NodeUnderTest(gatewayURL: gw.url)
        defer { node.cleanup() }
        try node.start()
        _ = try #require(gw.waitFor("hello"), "node log:\n\(node.log)")
        let pinned = try node.status()?["gateways"]?.arrayValue?.first?["tlsPin"]?.stringValue
        #expect(pinned == gw.fingerprint)
        #expect(node.log.contains("pinned its certificate sha256:\(gw.fingerprint ?? "")"))
        // Same host and port, different certificate: refused, pin kept.
        gw.kill9()
        let other = try TestCertificate(); defer { other.remove() }
        gw = try TestGateway(port: port, stateFile: state, args: ["--auto-approve", "--cert", other.certPath, "--key", other.keyPath])
        defer { gw.stop() }
        #expect(waitUntil(timeout: 30) { node.log.contains("does not match the pinned fingerprint") }, "\(node.log)")
        #expect(gw.all("hello").isEmpty)
        #expect(try node.status()?["gateways"]?.arrayValue?.first?["tlsPin"]?.stringValue == pinned)
    }

    @Test func terminalAuthErrorStopsRetrying() throws {
        let gw = try TestGateway(stateFile: stateFile(), args: ["--require-token", "right"])
        defer { gw.stop() }
        let node = NodeUnderTest(gatewayURL: gw.url, extraGateway: "token: 'wrong'")
        defer { node.cleanup() }
        try node.start()
        _ = try #require(gw.waitFor("connect"))
        #expect(waitUntil(timeout: 10) { node.log.contains("gateway.token") && node.log.contains("AUTH_TOKEN_MISMATCH") }, "\(node.log)")
        usleep(3_000_000)
        #expect(gw.all("connect").count == 1)
        let st = try #require(try node.status())
        #expect(st["daemon"]?["connection"]?.stringValue?.contains("gateway.token") == true)
        #expect(st["gateways"]?.arrayValue?.first?["lastError"]?.stringValue?.contains("AUTH_TOKEN_MISMATCH") == true)
    }

    @Test func sharedTokenThenDeviceToken() throws {
        let gw = try TestGateway(stateFile: stateFile(), args: ["--require-token", "s3cret", "--auto-approve"])
        defer { gw.stop() }
        let node = NodeUnderTest(gatewayURL: gw.url)
        defer { node.cleanup() }
        var env = node.env
        env["OPENCLAW_GATEWAY_TOKEN"] = "s3cret"
        let p = try BackgroundProcess(TestPaths.nodeBinary, ["run", "--config", node.configPath], env: env)
        let first = try #require(gw.waitFor("hello"), "\(p.log)")
        #expect(first["auth"] == ["token"])
        p.stop()
        try node.start()
        let second = try #require(gw.waitFor("hello"), "\(node.log)")
        #expect(second["auth"] == ["deviceToken"])
    }

    @Test func fallsBackToV2SignatureForOlderGateways() throws {
        let gw = try TestGateway(stateFile: stateFile(), args: ["--auto-approve", "--reject-v3"])
        defer { gw.stop() }
        let node = NodeUnderTest(gatewayURL: gw.url)
        defer { node.cleanup() }
        try node.start()
        let hello = try #require(gw.waitFor("hello"), "node log:\n\(node.log)")
        #expect(hello["sigVersion"] == "v2")
        #expect(gw.all("connect").count == 2)
    }

    @Test func deviceTokenMismatchDropsTokenAndRetriesOnce() throws {
        let gw = try TestGateway(stateFile: stateFile(), args: ["--auto-approve"])
        defer { gw.stop() }
        let node = NodeUnderTest(gatewayURL: gw.url)
        defer { node.cleanup() }
        try node.start()
        _ = try #require(gw.waitFor("hello"))
        gw.command(["cmd": "revoke_tokens"])
        _ = gw.waitFor("tokens_revoked")
        gw.command(["cmd": "close", "code": 1012])
        let again = try #require(gw.waitFor("hello", timeout: 30), "node log:\n\(node.log)")
        #expect(again["auth"] == [])
        #expect(again["issuedToken"] == true)
        #expect(node.log.contains("dropping it and retrying"))
    }

    @Test func setupCodeBootstrapsPairing() throws {
        let gw = try TestGateway(stateFile: stateFile(), args: ["--bootstrap", "boot-123"])
        defer { gw.stop() }
        let code = Encoding.base64url(Array(#"{"url":"\#(gw.url)","bootstrapToken":"boot-123"}"#.utf8))
        let node = NodeUnderTest(gatewayURL: gw.url, extraGateway: "setupCode: '\(code)'")
        defer { node.cleanup() }
        try node.start()
        let hello = try #require(gw.waitFor("hello"), "node log:\n\(node.log)")
        #expect(hello["auth"] == ["bootstrapToken"])
        node.stop()
        try node.start()
        #expect(gw.waitFor("hello")?["auth"] == ["deviceToken"])
    }

    @Test func silentGatewayTriggersTickTimeoutAndReconnect() throws {
        let gw = try TestGateway(stateFile: stateFile(), args: ["--auto-approve", "--silent", "--tick-ms", "300"])
        defer { gw.stop() }
        let node = NodeUnderTest(gatewayURL: gw.url)
        defer { node.cleanup() }
        try node.start()
        _ = try #require(gw.waitFor("hello"))
        let drop = try #require(gw.waitFor("disconnect", timeout: 10))
        #expect(drop["code"] == 4000)
        #expect(gw.waitFor("hello", timeout: 15) != nil)
        #expect(node.log.contains("nothing from the gateway"))
    }

    /// A frame over the pre-auth limit instead of the challenge ends the attempt at once with a
    /// log line that says so (it used to wait out the 15 s challenge timeout and blame that).
    @Test func oversizeFrameBeforeTheChallengeIsNamed() throws {
        let gw = try TestGateway(stateFile: stateFile(), args: ["--oversize-before-challenge", "71680"])
        defer { gw.stop() }
        let node = NodeUnderTest(gatewayURL: gw.url)
        defer { node.cleanup() }
        try node.start()
        #expect(waitUntil(timeout: 5) { node.log.contains("the gateway sent a 71680-byte frame before hello-ok (at most 65536)") },
                "\(node.log.suffix(1500))")
        #expect(!node.log.contains("no connect.challenge within"))
        #expect(node.isRunning)
    }

    @Test func shutdownEventWaitsForTheRestart() throws {
        let gw = try TestGateway(stateFile: stateFile(), args: ["--auto-approve"])
        defer { gw.stop() }
        let node = NodeUnderTest(gatewayURL: gw.url)
        defer { node.cleanup() }
        try node.start()
        _ = try #require(gw.waitFor("hello"))
        gw.command(["cmd": "shutdown", "restartExpectedMs": 1500])
        let start = Date()
        _ = try #require(gw.waitFor("hello", timeout: 20))
        #expect(Date().timeIntervalSince(start) >= 1.4)
        #expect(node.log.contains("back in about 1500 ms"))
    }

    @Test func hostileFramesNeverCrashTheNode() throws {
        let gw = try TestGateway(stateFile: stateFile(), args: ["--auto-approve", "--max-payload", "1048576"])
        defer { gw.stop() }
        let node = NodeUnderTest(gatewayURL: gw.url)
        defer { node.cleanup() }
        try node.start()
        _ = try #require(gw.waitFor("hello"))
        let frames = [
            "not json", "{", "[]", "null", "42", #"{"type":"event"}"#, #"{"type":"event","event":7}"#,
            #"{"type":"event","event":"node.invoke.request","payload":{"id":5,"command":"device.info"}}"#,
            #"{"type":"event","event":"node.invoke.request","payload":"x"}"#,
            #"{"type":"event","event":"node.invoke.request","payload":{"id":"p1","command":"device.info","paramsJSON":123}}"#,
            #"{"type":"res","id":"nope","ok":"yes"}"#, #"{"type":"req","id":"g1","method":"ping"}"#,
            #"{"type":"req","id":"g2","method":"something.else","params":{}}"#,
            #"{"type":"event","event":"some.future.event","payload":{"deep":[[[[{}]]]]}}"#,
            #"{"type":"weird","id":"1"}"#, String(repeating: "[", count: 100_000),
        ]
        for f in frames { gw.command(["cmd": "raw", "text": .string(f)]) }
        #expect(gw.invoke("device.info")?["ok"] == true, "node log:\n\(node.log.suffix(4000))\n\(gw.all("disconnect"))")
        #expect(node.isRunning)
        // A frame over the negotiated maxPayload: the node closes with 1009 and comes back.
        gw.command(["cmd": "raw", "text": .string(String(repeating: "x", count: 1_100_000))])
        let drop = try #require(gw.waitFor("disconnect", timeout: 10))
        #expect(drop["code"] == 1009)
        _ = try #require(gw.waitFor("hello", timeout: 45), "node log:\n\(node.log.suffix(3000))")
        #expect(gw.invoke("device.info")?["ok"] == true)
        #expect(node.isRunning)
        #expect(gw.schemaErrors.isEmpty, "\(gw.schemaErrors)")
    }
}
