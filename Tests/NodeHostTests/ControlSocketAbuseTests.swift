@testable import Config
import Foundation
@testable import Kit
@testable import Runtime
@testable import Support
import Testing

/// Local clients that misbehave on the control socket: silent, garbage, too many. The daemon stays
/// responsive, its threads stay bounded, and slots come back.
@Suite(.serialized) struct ControlSocketAbuseTests {
    static func rawConnect(_ path: String) -> Int32? {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var addr = sockaddr_un()
        addr.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &addr.sun_path) { raw in
            for (i, b) in path.utf8.prefix(raw.count - 1).enumerated() { raw[i] = b }
        }
        let ok = withUnsafePointer(to: &addr) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) == 0 }
        }
        if ok { return fd }
        close(fd)
        return nil
    }

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
        let g = try #require(Self.rawConnect(sock))
        _ = "this is not json\n".withCString { write(g, $0, strlen($0)) }
        var buf = [UInt8](repeating: 0, count: 4096)
        let n = read(g, &buf, buf.count)
        #expect(n > 0 && String(decoding: buf[0..<max(0, n)], as: UTF8.self).contains("INVALID_REQUEST"))
        close(g)

        // 100 clients that never write: 64 are served (and time out), the rest are told NODE_BUSY.
        var silent: [Int32] = []
        for _ in 0..<100 { if let fd = Self.rawConnect(sock) { silent.append(fd) } }
        defer { silent.forEach { close($0) } }
        #expect(silent.count == 100)
        usleep(300_000)
        let flooded = try node.cli(["invoke", "device.info"])
        #expect(flooded.code == 1 && flooded.stdout.contains("NODE_BUSY"), "\(flooded.stdout)\(flooded.stderr)")
        #expect(Self.threads(pid) <= baseline + ControlServer.maxClients + 2, "threads \(Self.threads(pid)) vs baseline \(baseline)")
        // After the idle timeout the slots are free again.
        #expect(waitUntil(timeout: 10) { (try? node.cli(["invoke", "device.info"]))?.code == 0 }, "\(node.log.suffix(1000))")
        #expect(node.isRunning)
        #expect(node.stop() == 0)
    }
}
