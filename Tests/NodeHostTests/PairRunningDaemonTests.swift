import Foundation
@testable import Support
@testable import TestSupport
import Testing

/// `openclaw-node pair` while the daemon runs: the daemon starts a new session with the stored
/// pairing at once — unless its config names another gateway, which the command says.
@Suite(.serialized) struct PairRunningDaemonTests {
    @Test func aRunningDaemonSwitchesToTheNewPairing() throws {
        let gw = try TestGateway(stateFile: TestPaths.tempDir("gw") + "/gateway.json", args: ["--bootstrap", "boot-run-1"])
        defer { gw.stop() }
        let node = PairCommandTests.bareNode(); defer { node.cleanup() }
        try node.start()
        #expect(waitUntil(timeout: 10) { (try? node.status())?["daemon"]?["running"] == true }, "\(node.log)")
        let code = PairCommandTests.code(["url": .string(gw.url), "bootstrapToken": "boot-run-1", "expiresAtMs": PairCommandTests.inTenMinutes])
        let r = try node.cli(["pair", code])
        #expect(r.code == 0 && r.stdout.contains("The running daemon started a new session with it"), "\(r.stdout)\(r.stderr)")
        // The pairing's own connect (bootstrap token), then the daemon's, with the device token.
        #expect(gw.waitFor("hello")?["auth"] == ["bootstrapToken"])
        let daemon = try #require(gw.waitFor("hello", timeout: 20), "\(node.log)")
        #expect(daemon["auth"] == ["deviceToken"], "\(daemon)")
        #expect(node.log.contains("a new pairing was stored"), "\(node.log)")
    }

    @Test func aDaemonWhoseConfigNamesAGatewayIsLeftAndToldAbout() throws {
        let gw = try TestGateway(stateFile: TestPaths.tempDir("gw") + "/gateway.json", args: ["--bootstrap", "boot-run-2"])
        defer { gw.stop() }
        let node = NodeUnderTest(gatewaySection: "url: 'ws://127.0.0.1:9', discovery: { lan: false }"); defer { node.cleanup() }
        try node.start()
        #expect(waitUntil(timeout: 10) { (try? node.status())?["daemon"]?["running"] == true }, "\(node.log)")
        let code = PairCommandTests.code(["url": .string(gw.url), "bootstrapToken": "boot-run-2", "expiresAtMs": PairCommandTests.inTenMinutes])
        let r = try node.cli(["pair", code, "--json"])
        let out = JSONValue.parse(r.stdout)
        #expect(r.code == 0 && out?["runningDaemon"] == "kept", "\(r.stdout)\(r.stderr)")
        #expect(!node.log.contains("a new pairing was stored"))
    }
}
