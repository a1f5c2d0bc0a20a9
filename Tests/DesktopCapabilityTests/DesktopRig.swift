import Foundation
@testable import Support
@testable import TestSupport
import Testing

/// desktop.stream end to end: the real daemon against the test gateway, whose desktop broker
/// (Tests/gateway/desktop_broker.py) mints the ticket, takes the attach socket, answers the VNC
/// password challenge and serves an operator's viewer on a loopback port; the viewer is vncdotool
/// from PyPI (Tests/desktop/rfb_viewer.py). Only 127.0.0.1 and Unix sockets are used.
final class DesktopRig: @unchecked Sendable {
    let gw: TestGateway
    let node: NodeUnderTest
    let dir: String

    static var venv: String {
        ProcessInfo.processInfo.environment["OPENCLAW_TEST_MCP_VENV"]
            ?? (ProcessInfo.processInfo.environment["HOME"] ?? "/root") + "/.cache/openclaw-node/mcp-venv"
    }
    static var python: String { venv + "/bin/python" }

    /// `desktop`: the inside of `capabilities.desktop: { … }` after `enabled: true`; `others`:
    /// more sections of `capabilities`.
    init(desktop: String, others: String = "", env: [String: String] = [:]) throws {
        guard FileManager.default.isExecutableFile(atPath: Self.python) else {
            throw TestFailure("no test environment at \(Self.venv) for the RFB viewer: run scripts/mcp-venv (scripts/test does)")
        }
        dir = TestPaths.tempDir("desktop")
        gw = try TestGateway(stateFile: dir + "/gw.json", args: ["--auto-approve"])
        node = NodeUnderTest(gatewayURL: gw.url, extra: "capabilities: { desktop: { enabled: true, \(desktop) }, " +
                             "canvas: { enabled: false }, camera: { enabled: false }\(others.isEmpty ? "" : ", " + others) }")
        node.extraEnv = env
        try node.start()
        guard gw.waitFor("hello") != nil else { throw TestFailure("no hello: \(node.log)") }
    }

    /// Starts a stream through the broker; returns the viewer's loopback port.
    func startStream(_ id: String, _ extra: [String: JSONValue] = [:]) throws -> Int {
        var c: [String: JSONValue] = ["cmd": "desktop_stream", "id": .string(id)]
        c.merge(extra) { _, n in n }
        gw.command(.object(c))
        let viewer = try #require(gw.waitFor("desktop_viewer") { $0["id"]?.stringValue == id }, "no viewer port")
        return try #require(viewer["port"]?.intValue)
    }

    /// The operator's viewer: connects, reads pixels, maybe clicks, hangs up. Its JSON line.
    func view(_ port: Int, pixels: [(Int, Int)] = [], click: (Int, Int)? = nil, refreshes: Int = 1) throws -> JSONValue {
        var args = [TestPaths.repoRoot + "/Tests/desktop/rfb_viewer.py", String(port), "--refreshes", String(refreshes)]
        for p in pixels { args += ["--pixel", "\(p.0),\(p.1)"] }
        if let click { args += ["--click", "\(click.0),\(click.1)"] }
        let r = try runProcess(Self.python, args, timeout: 90)
        return try #require(JSONValue.parse(r.stdout), "viewer printed no JSON (exit \(r.code)): \(r.stderr.suffix(1500))\n\(node.log.suffix(2000))")
    }

    func result(_ id: String, timeout: TimeInterval = 30) -> JSONValue? {
        gw.waitFor("invoke_result", timeout: timeout) { $0["id"]?.stringValue == id }
    }

    /// The duplex progress chunks of an invoke, in order.
    func progress(_ id: String) -> [String] {
        gw.all("progress").filter { $0["id"]?.stringValue == id }.compactMap { $0["chunk"]?.stringValue }
    }

    /// The pid of the VNC server the node started for the first stream, from its log line.
    func serverPid(_ kind: String) -> Int32? {
        guard let r = node.log.range(of: "started \(kind) (pid ") else { return nil }
        return Int32(node.log[r.upperBound...].prefix { $0.isNumber })
    }

    /// Directories the node made for its VNC servers that are still there.
    var streamDirectories: [String] {
        let root = node.dir + "/state"
        let all = (FileManager.default.enumerator(atPath: root)?.allObjects as? [String]) ?? []
        return all.filter { ($0 as NSString).lastPathComponent.hasPrefix("stream-") }
    }

    /// What the broker reported, for failure messages.
    var brokerEvents: String {
        ["desktop_viewer", "desktop_attach_refused", "desktop_attached", "desktop_auth", "desktop_viewer_connected",
         "desktop_stall_over", "desktop_error", "desktop_closed"].flatMap { gw.all($0) }.map { $0.jsonString() }.joined(separator: "\n")
    }

    /// Runs still (a zombie — ended, not yet reaped by whoever adopted it — does not).
    static func isAlive(_ pid: Int32) -> Bool {
        guard kill(pid, 0) == 0 else { return false }
        let stat = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? ""
        // "PID (comm) STATE …": the state follows the last ')'.
        guard let close = stat.lastIndex(of: ")") else { return false }
        return stat[stat.index(after: close)...].trimmingCharacters(in: .whitespaces).first != "Z"
    }

    /// Running processes whose command line mentions `text`: "pid command line" each.
    static func processes(mentioning text: String) -> [String] {
        let pids = ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []).compactMap { Int32($0) }
        return pids.compactMap { pid -> String? in
            guard pid != getpid(), isAlive(pid),
                  let raw = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else { return nil }
            let line = String(decoding: raw.map { $0 == 0 ? 32 : $0 }, as: UTF8.self)
            return line.contains(text) ? "\(pid) \(line)" : nil
        }
    }

    func stop() {
        node.cleanup()
        gw.stop()
        try? FileManager.default.removeItem(atPath: dir)
    }
}
