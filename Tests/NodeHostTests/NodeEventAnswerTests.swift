import Foundation
@testable import Support
@testable import TestSupport
import Testing

/// A node.event answered `{handled: false, reason}` (PROTOCOL.md §4.6) is the gateway's answer, not
/// an error: the node says so once, in words, keeps its session and does not send the event again.
@Suite(.serialized) struct NodeEventAnswerTests {
    @Test func handledFalseIsLoggedOnceAndNotResent() throws {
        let gw = try TestGateway(stateFile: TestPaths.tempDir("gw") + "/gw.json", args: ["--auto-approve", "--event-unhandled", "permission_required"])
        let node = NodeUnderTest(gatewayURL: gw.url)
        defer { node.cleanup(); gw.stop() }
        try node.start()
        #expect(gw.waitFor("hello") != nil, "\(node.log)")
        // node.presence.alive goes out on connect and is answered handled:false.
        #expect(gw.waitFor("node_event") { $0["name"] == "node.presence.alive" } != nil, "\(node.log)")
        let line = "the gateway received node.presence.alive but did not use it (permission_required); not sent again for that"
        #expect(waitUntil(timeout: 10) { node.log.contains(line) }, "\(node.log.suffix(3000))")
        // The session stays up; the next session announces itself again (and says it once again).
        #expect(gw.all("disconnect").isEmpty)
        gw.command(["cmd": "close", "code": 1012])
        #expect(gw.waitFor("hello", timeout: 30) != nil, "\(node.log.suffix(3000))")
        #expect(gw.waitFor("node_event", timeout: 20) { $0["name"] == "node.presence.alive" } != nil)
        #expect(waitUntil(timeout: 10) { node.log.components(separatedBy: line).count - 1 == 2 }, "\(node.log.suffix(3000))")
        // One per session: an answered event is not sent again.
        #expect(gw.all("node_event").filter { $0["name"] == "node.presence.alive" }.count == 2)
        #expect(gw.schemaErrors.isEmpty, "\(gw.schemaErrors)")
    }
}
