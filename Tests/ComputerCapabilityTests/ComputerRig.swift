@testable import Config
import Foundation
@testable import Kit
@testable import Support
@testable import TestSupport
import Testing

/// computer.act end to end: the real daemon with computer and screen enabled against the test
/// gateway, one execution id, and the calls the desktop tests make (a screenshot's frame id, an
/// action that must succeed). Stopped by `stop`.
final class ComputerRig: @unchecked Sendable {
    let gw: TestGateway
    let node: NodeUnderTest
    let exec: String

    /// `computer` and `screen`: what follows `enabled: true` in each section.
    init(computer: String = "", screen: String = "", env: [String: String] = [:], exec: String) throws {
        self.exec = exec
        gw = try TestGateway(stateFile: TestPaths.tempDir("gw") + "/gw.json", args: ["--auto-approve"])
        node = NodeUnderTest(gatewayURL: gw.url, extra: "capabilities: { computer: { enabled: true\(computer.isEmpty ? "" : ", " + computer) }, " +
                             "screen: { enabled: true\(screen.isEmpty ? "" : ", " + screen) }, canvas: { enabled: false }, camera: { enabled: false } }")
        node.extraEnv = env
        try node.start()
        let hello = try #require(gw.waitFor("connect"), "\(node.log)")
        #expect(hello["commands"]?.arrayValue?.contains("computer.act") == true, "\(hello)\n\(node.log)")
    }

    func call(_ command: String, _ params: JSONValue) throws -> JSONValue {
        try #require(gw.invoke(command, paramsJSON: params.jsonString(), timeoutMs: 30_000), "\(node.log)")
    }

    /// The displayFrameId of a PNG screenshot of `screen`, `width` pixels wide.
    func frame(_ screen: Int = 0, width: Int) throws -> String {
        let shot = try #require(try call("screen.snapshot", ["executionId": .string(exec), "screenIndex": .number(Double(screen)),
                                                             "maxWidth": .number(Double(width)), "format": "png"])["payload"], "\(node.log.suffix(1500))")
        return try #require(shot["displayFrameId"]?.stringValue)
    }

    /// computer.act in this execution; it must succeed.
    func act(_ p: [String: JSONValue]) throws {
        var params = p
        params["executionId"] = .string(exec)
        let r = try call("computer.act", .object(params))
        #expect(r["ok"] == true, "\(p): \(r)\n\(node.log.suffix(1500))")
    }

    func stop() {
        node.cleanup()
        gw.stop()
    }
}
