@testable import Config
import Foundation
@testable import HostPresence
@testable import Kit
import Media
@testable import NodeCLI
@testable import Registry
@testable import Store
@testable import Support

/// Tests/gateway/canvas_host.py: the loopback stand-in for a gateway's canvas host.
final class CanvasHostServer: @unchecked Sendable {
    let server: PythonServer
    init() throws { server = try PythonServer(script: "canvas_host.py") }
    var base: String { "http://127.0.0.1:\(server.port)" }
    func stop() { server.stop() }

    /// Request paths seen so far, drained from the server's output.
    func requests(timeout: TimeInterval = 0.2) -> [String] {
        var out: [String] = []
        while let line = server.nextLine(timeout: timeout), let v = JSONValue.parse(line) {
            if let p = v["path"]?.stringValue { out.append(p) }
        }
        return out
    }
}

/// A daemon with the canvas, connected to a test gateway (which advertises `canvasHost`, if
/// given); commands go through the gateway as an agent's would.
final class CanvasNode: @unchecked Sendable {
    let gw: TestGateway
    let node: NodeUnderTest

    static var browserInstalled: Bool {
        FileManager.default.isExecutableFile(atPath: "/usr/lib/chromium/chromium-headless-shell")
    }
    static var windowBrowserInstalled: Bool { FileManager.default.isExecutableFile(atPath: "/usr/lib/chromium/chromium") }

    init(canvasHost: String? = nil, canvas: String = "", otherCapabilities: String = "", gatewayArgs: [String] = [],
         env: [String: String] = [:]) throws {
        let dir = TestPaths.tempDir("canvas-gw")
        gw = try TestGateway(stateFile: dir + "/gw.json",
                             args: ["--auto-approve"] + (canvasHost.map { ["--canvas-host", $0] } ?? []) + gatewayArgs)
        node = NodeUnderTest(gatewayURL: gw.url, extra: "capabilities: { canvas: { \(canvas) }, \(otherCapabilities) }")
        node.extraEnv = env
        try node.start()
        guard gw.waitFor("hello") != nil else { throw TestFailure("node did not connect: \(node.log)") }
    }

    /// One invoke through the gateway: (ok, payload, error).
    func invoke(_ command: String, _ params: String = "{}", timeoutMs: Int? = nil, wait: TimeInterval = 30)
        -> (ok: Bool, payload: JSONValue?, error: JSONValue?) {
        let r = gw.invoke(command, paramsJSON: params, timeoutMs: timeoutMs, wait: wait)
        return (r?["ok"] == true, r?["payload"], r?["error"])
    }

    func eval(_ js: String) -> String? {
        let r = invoke("canvas.eval", JSONValue.object(["javaScript": .string(js)]).jsonString())
        return r.payload?["result"]?.stringValue
    }

    func snapshot(_ params: String) throws -> DecodedImage {
        let r = invoke("canvas.snapshot", params)
        guard r.ok, let b64 = r.payload?["base64"]?.stringValue, let data = Data(base64Encoded: b64) else {
            throw TestFailure("snapshot failed: \(String(describing: r.error)) \(node.log.suffix(2000))")
        }
        return r.payload?["format"] == "png" ? try ImageDecoder.decodePNG([UInt8](data)) : try ImageDecoder.decodeJPEG([UInt8](data))
    }

    /// PIDs of browser processes using this node's profile.
    var browserPids: [Int32] {
        let profile = node.dir + "/state/canvas/browser"
        guard let r = try? runProcess("/usr/bin/pgrep", ["-f", "--", "--user-data-dir=\(profile)"]) else { return [] }
        return r.stdout.split(separator: "\n").compactMap { Int32($0) }
    }

    func stop() {
        node.cleanup()
        gw.stop()
    }
}
