@testable import Config
import ControlLink
@testable import ControlSocket
import Foundation
@testable import Kit
@testable import Support
@testable import TestSupport
import Testing

/// The daemon under a (stand-in) systemd: NOTIFY_SOCKET points at a datagram socket this test
/// reads, as systemd's own would be for a Type=notify unit with WatchdogSec=.
@Suite(.serialized) struct ServiceNotifyTests {
    /// A bound AF_UNIX datagram socket collecting what the node sends.
    final class NotifySocket {
        let fd: Int32
        let path: String
        init(path: String) throws {
            self.path = path
            let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
            var addr = try UnixSocket.address(path)
            let ok = withUnsafePointer(to: &addr) { p in
                p.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) == 0 }
            }
            guard ok else { close(fd); throw TestFailure("bind \(path) failed") }
            self.fd = fd
        }
        /// Every message that arrives within `seconds`.
        func collect(for seconds: Double) -> [String] {
            var out: [String] = []
            let end = Date() + seconds
            var buf = [UInt8](repeating: 0, count: 4096)
            while Date() < end {
                var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                guard poll(&p, 1, 50) > 0 else { continue }
                let n = recv(fd, &buf, buf.count, 0)
                if n > 0 { out.append(String(decoding: buf[0..<n], as: UTF8.self)) }
            }
            return out
        }
        deinit { close(fd); unlink(path) }
    }

    @Test func readyStatusWatchdogAndStopping() throws {
        let node = NodeUnderTest(gatewaySection: "discovery: { lan: false }")
        defer { node.cleanup() }
        let notify = try NotifySocket(path: node.dir + "/notify.sock")
        node.extraEnv = ["NOTIFY_SOCKET": notify.path, "WATCHDOG_USEC": "400000"]
        try node.start()
        let first = notify.collect(for: 2.0)
        let ready = first.first { $0.contains("READY=1") }
        #expect(ready != nil, "no READY=1 in \(first)\n\(node.log)")
        #expect(ready?.contains("STATUS=") == true && ready?.contains("serving device") == true, "\(ready ?? "")")
        // Half of WatchdogSec: about every 200 ms, so several in 2 s.
        #expect(first.filter { $0.contains("WATCHDOG=1") }.count >= 4, "\(first)")
        // The control socket answers by the time READY=1 was sent.
        #expect(try node.cli(["invoke", "device.info"]).code == 0)
        #expect(node.log.contains("systemd watchdog: alive every"))
        kill(node.process!.pid, SIGTERM)
        let last = notify.collect(for: 1.0)
        #expect(last.contains { $0.contains("STOPPING=1") }, "\(last)")
        #expect(node.stop() == 0)
    }

    @Test func outsideSystemdNothingIsSent() throws {
        let node = NodeUnderTest(gatewaySection: "discovery: { lan: false }")
        defer { node.cleanup() }
        try node.start()
        #expect(waitUntil(timeout: 20) { FileManager.default.fileExists(atPath: node.dir + "/state/control.sock") }, "\(node.log)")
        #expect(!node.log.contains("systemd watchdog"))
        #expect(node.stop() == 0)
    }
}

/// Under systemd, stderr is the journal: lines carry their syslog priority (`journalctl -p warning`
/// then works) and no timestamp of their own.
@Suite struct JournalLogTests {
    @Test func journalStreamLinesCarryPriorities() throws {
        let node = NodeUnderTest(gatewaySection: "discovery: { lan: false }")
        defer { node.cleanup() }
        let log = node.dir + "/journal.txt"
        #expect(FileManager.default.createFile(atPath: log, contents: nil))
        // As systemd does: JOURNAL_STREAM names the device:inode that stderr is.
        let script = "export JOURNAL_STREAM=$(stat -c '%d:%i' '\(log)'); exec '\(TestPaths.nodeBinary)' run --config '\(node.configPath)' 2>>'\(log)'"
        let p = try BackgroundProcess("/bin/sh", ["-c", script], env: node.env)
        defer { p.stop() }
        #expect(waitUntil(timeout: 20) { ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").contains("no gateway") })
        p.stop()
        let text = try String(contentsOfFile: log, encoding: .utf8)
        let lines = text.split(separator: "\n")
        #expect(lines.contains { $0.hasPrefix("<6>node: openclaw-node") }, "\(text)")
        #expect(lines.contains { $0.hasPrefix("<4>") && $0.contains("no gateway") }, "\(text)")
        #expect(lines.allSatisfy { $0.hasPrefix("<") }, "\(text)")
        #expect(!text.contains(" INFO "), "\(text)")
    }

    @Test func elsewhereLinesCarryTimestampAndLevel() {
        let line = Logger.format(.warn, component: "gateway", message: "a\nb", journal: false)
        #expect(line.contains(" WARN  gateway: a\nb\n"))
        #expect(Logger.format(.error, component: "x", message: "a\nb", journal: true) == "<3>x: a\n<3>x: b\n")
    }
}
