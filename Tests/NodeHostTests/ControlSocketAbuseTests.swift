@testable import Config
import ControlLink
@testable import ControlSocket
import Foundation
@testable import Kit
@testable import Support
@testable import TestSupport
import Testing

/// Local clients that misbehave on the control socket: silent, garbage, too many. The daemon stays
/// responsive, its threads stay bounded, and slots come back.
@Suite(.serialized) struct ControlSocketAbuseTests {
    static func threads(_ pid: Int32) -> Int {
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        return Int(status.split(separator: "\n").first { $0.hasPrefix("Threads:") }?.split(separator: "\t").last ?? "") ?? -1
    }

    @Test func silentGarbageAndTooManyClients() throws {
        let node = NodeUnderTest(gatewaySection: "discovery: { lan: false }")
        defer { node.cleanup() }
        node.extraEnv = ["OPENCLAW_NODE_CONTROL_IDLE_SECONDS": "2"]
        try node.start()
        let sock = node.dir + "/state/control.sock"
        #expect(waitUntil(timeout: 20) { FileManager.default.fileExists(atPath: sock) }, "\(node.log)")
        let pid = node.process!.pid
        let baseline = Self.threads(pid)

        // Garbage is answered and the connection goes on serving.
        let g = try UnixSocket.connect(sock)
        #expect(g.writeAll(Array("this is not json\n".utf8)))
        var buffer: [UInt8] = []
        let reply = g.readLine(limit: 4096, buffer: &buffer).map { String(decoding: $0, as: UTF8.self) }
        #expect(reply?.contains("INVALID_REQUEST") == true, "\(reply ?? "nothing")")
        g.close()

        // 200 clients that never write: the table holds 64, each newcomer drops the one idle longest,
        // and the operator's own invoke is still served at once.
        var silent: [UnixSocket] = []
        for _ in 0..<200 { if let s = try? UnixSocket.connect(sock) { silent.append(s) } }
        defer { silent.forEach { $0.close() } }
        #expect(silent.count == 200)
        let flooded = try node.cli(["invoke", "device.info"])
        #expect(flooded.code == 0, "the operator is not locked out: \(flooded.stdout)\(flooded.stderr)")
        // A dropped client's thread ends once it sees its socket closed: on a busy machine that
        // can come a little after the drop, so the bound is waited for, not sampled once.
        #expect(waitUntil(timeout: 20) { Self.threads(pid) <= baseline + ControlServer.maxClients + 4 },
                "threads \(Self.threads(pid)) vs baseline \(baseline)")
        #expect(node.log.contains("dropped the client idle longest"), "\(node.log.suffix(1000))")
        // The dropped ones see their socket closed; the newest are still connected.
        var buf: [UInt8] = []
        #expect(silent[0].readLine(limit: 64, buffer: &buf) == nil, "the oldest idle client was dropped")
        #expect(node.isRunning)
        #expect(node.stop() == 0)
    }
}
