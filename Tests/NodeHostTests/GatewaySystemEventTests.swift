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

/// Network changes and resume from suspend reach the gateway connection.
@Suite(.serialized) struct GatewaySystemEventTests {
    @Test func resumeFromSuspendAnnouncesPresence() throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let logind = try PythonServer(script: "fake_logind.py", args: [bus.address])
        defer { logind.stop() }
        let gw = try TestGateway(stateFile: TestPaths.tempDir("gw") + "/gw.json", args: ["--auto-approve"])
        defer { gw.stop() }
        let node = NodeUnderTest(gatewayURL: gw.url)
        defer { node.cleanup() }
        var env = node.env
        env["DBUS_SYSTEM_BUS_ADDRESS"] = bus.address
        let p = try BackgroundProcess(TestPaths.nodeBinary, ["run", "--config", node.configPath], env: env)
        defer { p.stop() }
        _ = try #require(gw.waitFor("hello"), "\(p.log)")
        _ = try #require(gw.waitFor("node_event") { $0["payload"]?["trigger"] == "connect" })
        // The node listens for resume before it connects: the gateway seeing it means it hears.
        logind.send("sleep")
        logind.send("resume")
        let alive = gw.waitFor("node_event", timeout: 10) { $0["name"] == "node.presence.alive" && $0["payload"]?["trigger"] == "background" }
        #expect(alive != nil, "\(p.log)")
        #expect(p.log.contains("system resumed from suspend"))
        #expect(gw.schemaErrors.isEmpty)
    }

    @Test(.enabled(if: getuid() == 0, "creating a veth pair needs root"))
    func networkChangeCutsTheBackoffShort() throws {
        let state = TestPaths.tempDir("gw") + "/gw.json"
        var gw = try TestGateway(stateFile: state, args: ["--auto-approve"])
        let port = gw.port
        let node = NodeUnderTest(gatewayURL: gw.url)
        defer { node.cleanup() }
        // A long first backoff step (20 s), so a reconnect that the network change brought is told
        // from one at the end of the wait by a wide margin, however busy the machine.
        node.extraEnv = ["OPENCLAW_NODE_RECONNECT_INITIAL_MS": "20000", "OPENCLAW_NODE_RECONNECT_MAX_MS": "30000"]
        try node.start()
        _ = try #require(gw.waitFor("hello"))
        gw.kill9()
        #expect(waitUntil(timeout: 40) { node.log.contains("retrying in 20.0 s") }, "\(node.log)")
        gw = try TestGateway(port: port, stateFile: state, args: ["--auto-approve"])
        defer { gw.stop() }
        let name = "ocn\(getpid() % 10000)"
        _ = try runProcess("/sbin/ip", ["link", "add", name + "a", "type", "veth", "peer", "name", name + "b"])
        _ = try runProcess("/sbin/ip", ["link", "del", name + "a"])
        let hello = gw.waitFor("hello", timeout: 40)
        #expect(hello != nil, "\(node.log)")
        // From the node's own log times: connected again before the 20 s wait would have ended.
        // (The gateway can see the node before the node's line reaches this test's copy of its log.)
        #expect(waitUntil(timeout: 20) { logTimes(of: "connected to", in: node.log).count >= 2 }, "\(node.log)")
        let waiting = try #require(logTimes(of: "retrying in 20.0 s", in: node.log).last)
        let connected = try #require(logTimes(of: "connected to", in: node.log).last)
        #expect(connected > waiting && connected - waiting < 19, "connected \(connected - waiting) s into the 20 s wait\n\(node.log)")
        #expect(node.log.contains("network changed; reconnecting now"))
    }
}
