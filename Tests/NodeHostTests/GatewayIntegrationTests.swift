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

/// The real node binary against the protocol-faithful test gateway, end to end.
@Suite(.serialized) struct GatewayIntegrationTests {
    func stateFile() -> String { TestPaths.tempDir("gw") + "/gateway.json" }

    @Test func pairingApprovalTokenAndReconnect() throws {
        let gw = try TestGateway(stateFile: stateFile())
        defer { gw.stop() }
        let node = NodeUnderTest(gatewayURL: gw.url)
        defer { node.cleanup() }
        try node.start()

        let req = try #require(gw.waitFor("pairing_requested"), "node log:\n\(node.log)")
        let requestId = try #require(req["requestId"]?.stringValue)
        #expect(waitUntil(timeout: 10) {
            (try? node.status())?["gateways"]?.arrayValue?.first?["pairing"]?.stringValue == "pending approval (request \(requestId))"
        })
        #expect(waitUntil(timeout: 5) { node.log.contains("openclaw devices approve \(requestId)") })
        let human = try node.cli(["status"])
        #expect(human.stdout.contains("pending approval (request \(requestId))"))
        // It keeps asking (with backoff) and keeps the same request.
        let connect = try #require(gw.waitFor("connect"))
        #expect(connect["client"]?["id"] == "node-host")
        #expect(connect["client"]?["platform"] == "linux")
        #expect(connect["client"]?["deviceFamily"] == "Linux")
        #expect(connect["client"]?["mode"] == "node")
        // Exactly what this machine's registry advertises (device always; canvas where Chromium is installed).
        let manifest = JSONValue.parse(try node.cli(["caps", "--json"]).stdout)
        // … plus the session's device-pairing-wait (it listens on a pairing refusal kept open).
        #expect(connect["caps"] == .array((manifest?["caps"]?.arrayValue ?? []) + ["device-pairing-wait"]) && connect["caps"]?.arrayValue?.first == "device")
        #expect(connect["commands"] == manifest?["commands"])

        gw.command(["cmd": "approve", "requestId": .string(requestId)])
        let hello = try #require(gw.waitFor("hello", timeout: 40), "node log:\n\(node.log)")
        #expect(hello["sigVersion"] == "v3")
        #expect(hello["issuedToken"] == true)
        #expect(waitUntil(timeout: 10) { (try? node.status())?["daemon"]?["connected"] == true })
        let st = try #require(try node.status())
        #expect(st["gateways"]?.arrayValue?.first?["pairing"] == "paired")
        #expect(st["gateways"]?.arrayValue?.first?["hasDeviceToken"] == true)

        let info = try #require(gw.invoke("device.info"))
        #expect(info["ok"] == true)
        #expect(info["known"] == true)
        #expect(info["payload"]?["appVersion"]?.stringValue == NodeVersion.version)
        let presence = try #require(gw.waitFor("node_event") { $0["name"] == "node.presence.alive" })
        #expect(presence["payload"]?["trigger"] == "connect")

        // Restart the node: it reconnects with its device token and no new pairing request.
        #expect(node.stop() == 0)
        let pairingsBefore = gw.all("pairing_requested").count
        try node.start()
        let second = try #require(gw.waitFor("hello", timeout: 20), "node log:\n\(node.log)\ngateway:\n\(gw.all("connect"))\n\(gw.all("disconnect"))")
        #expect(second["auth"] == ["deviceToken"])
        #expect(gw.all("pairing_requested").count == pairingsBefore)
        #expect(gw.schemaErrors.isEmpty, "\(gw.schemaErrors)")
    }

    @Test func invokeParamsAndErrorsThroughTheGateway() throws {
        let gw = try TestGateway(stateFile: stateFile(), args: ["--auto-approve"])
        defer { gw.stop() }
        let node = NodeUnderTest(gatewayURL: gw.url)
        defer { node.cleanup() }
        try node.start()
        _ = try #require(gw.waitFor("hello"), "node log:\n\(node.log)")

        let noParams = try #require(gw.invoke("device.status"))
        #expect(noParams["ok"] == true)
        #expect((noParams["payload"]?["uptimeSeconds"]?.doubleValue ?? 0) > 0)
        let withParams = try #require(gw.invoke("device.info", paramsJSON: "{}", timeoutMs: 5000))
        #expect(withParams["ok"] == true)
        let unknown = try #require(gw.invoke("nope.nope"))
        #expect(unknown["ok"] == false)
        #expect(unknown["error"]?["code"] == "INVALID_REQUEST")
        let bad = try #require(gw.invoke("device.info", paramsJSON: "[1]"))
        #expect(bad["error"]?["code"] == "INVALID_REQUEST")
        let disabled = try #require(gw.invoke("camera.snap"))
        #expect(disabled["error"]?["code"] == "CAMERA_UNAVAILABLE")
        #expect(gw.schemaErrors.isEmpty, "\(gw.schemaErrors)")
    }
}
