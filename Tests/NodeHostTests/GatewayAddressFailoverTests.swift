import Foundation
@testable import Support
@testable import TestSupport
import Testing

/// A pairing link may name several addresses of one gateway (`urls`: a LAN address, a public
/// name): when the first cannot be reached the node tries the next at once, pairs or reconnects
/// there with the same device token, and after a restart finds it again from what `pair` stored.
@Suite(.serialized) struct GatewayAddressFailoverTests {
    @Test func theNextAddressOfTheLinkIsTriedWhenTheFirstIsDown() throws {
        let gw = try TestGateway(stateFile: TestPaths.tempDir("gw") + "/gateway.json", args: ["--bootstrap", "boot-fo"])
        defer { gw.stop() }
        let dead = "ws://127.0.0.1:\(try freeLoopbackPort())"
        let node = NodeUnderTest(gatewaySection: "discovery: { lan: false }"); defer { node.cleanup() }
        let code = PairCommandTests.code(["url": .string(dead), "urls": [.string(dead), .string(gw.url)], "bootstrapToken": "boot-fo",
                                          "expiresAtMs": PairCommandTests.inTenMinutes])
        let r = try node.cli(["pair", code])
        #expect(r.code == 0 && r.stdout.contains("Paired with \(dead) (reached at \(gw.url))"), "\(r.stdout)\(r.stderr)")
        #expect(gw.waitFor("hello")?["auth"] == ["bootstrapToken"])

        // The daemon: the stored primary is down, the stored alternate answers, with the device token.
        try node.start()
        let again = try #require(gw.waitFor("hello", timeout: 20), "\(node.log)")
        #expect(again["auth"] == ["deviceToken"], "the token stored under the gateway, not under the address")
        #expect(node.log.contains("\(dead): cannot reach it") && node.log.contains("trying \(gw.url), another address the pairing link named"), "\(node.log)")
        let st = try #require(try node.status())
        #expect(st["gateways"]?.arrayValue?.count == 1, "one gateway, however many addresses: \(st)")
        #expect(gw.schemaErrors.isEmpty, "\(gw.schemaErrors)")
    }

    /// Every address down: the node backs off between rounds instead of spinning through them.
    @Test func aRoundOfDeadAddressesWaitsForTheBackoff() throws {
        let gw = try TestGateway(stateFile: TestPaths.tempDir("gw") + "/gateway.json", args: ["--bootstrap", "boot-fo2"])
        let live = gw.url
        let dead = "ws://127.0.0.1:\(try freeLoopbackPort())"
        let node = NodeUnderTest(gatewaySection: "discovery: { lan: false }"); defer { node.cleanup() }
        let code = PairCommandTests.code(["url": .string(live), "urls": [.string(live), .string(dead)], "bootstrapToken": "boot-fo2",
                                          "expiresAtMs": PairCommandTests.inTenMinutes])
        #expect(try node.cli(["pair", code]).code == 0)
        gw.stop()
        node.extraEnv = ["OPENCLAW_NODE_RECONNECT_INITIAL_MS": "1000", "OPENCLAW_NODE_RECONNECT_MAX_MS": "1000"]
        try node.start()
        // One hop per round, and the backoff's 1 s between rounds: read from the log's own times,
        // so a busy machine (which only makes the gaps longer) does not change the verdict.
        let hop = "another address the pairing link named"
        #expect(waitUntil(timeout: 30) { logTimes(of: hop, in: node.log).count >= 4 }, "\(node.log.suffix(2000))")
        let times = logTimes(of: hop, in: node.log)
        for (a, b) in zip(times, times.dropFirst()) {
            #expect(b - a >= 0.9, "a new round \(b - a) s after the last, not after the 1 s backoff: a spin\n\(node.log.suffix(2000))")
        }
    }
}
