@testable import Config
import Foundation
@testable import HostPresence
@testable import Kit
@testable import NodeCLI
@testable import Registry
@testable import Store
@testable import Support

/// A helper server written in Python (Debian's python3 with python3-websockets etc.), started for
/// one test and stopped by PID. The script prints a JSON line when it is ready.
final class PythonServer: @unchecked Sendable {
    static let python = "/usr/bin/python3"
    let child: Subprocess
    let ready: JSONValue
    private let reader: LineReader

    init(script: String, args: [String] = [], readyTimeout: TimeInterval = 20) throws {
        // The test process talks to these servers through the node's own transport, as the daemon
        // does, and like the daemon (CLI.swift) it must not die of SIGPIPE when a peer hangs up
        // under a TLS write (OpenSSL writes with plain write(2)). Run alone, a TLS test did.
        signal(SIGPIPE, SIG_IGN)
        child = try Subprocess.spawn(PythonServer.python, ["-u", TestPaths.repoRoot + "/Tests/gateway/" + script] + args,
                                     stdin: .pipe, stdout: .pipe, stderr: .inherit)
        reader = LineReader(child.stdout!)
        guard let first = reader.next(timeout: readyTimeout), let v = JSONValue.parse(first) else {
            child.terminate(grace: .seconds(1))
            throw TestFailure("\(script) did not start")
        }
        ready = v
    }

    var port: Int { ready["port"]?.intValue ?? 0 }
    var pid: Int32 { child.pid }

    /// Next line the server printed (after the ready line).
    func nextLine(timeout: TimeInterval = 10) -> String? { reader.next(timeout: timeout) }

    /// The next JSON line it prints that has `key` (others are skipped), waiting up to `timeout`.
    func next(withKey key: String, timeout: TimeInterval = 10) -> JSONValue? {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            guard let line = nextLine(timeout: deadline.timeIntervalSinceNow), let v = JSONValue.parse(line) else { continue }
            if v[key] != nil { return v }
        }
        return nil
    }

    /// Writes a command line; a server that already died is not an error here (the test's
    /// expectations catch that), and must not kill the test process with SIGPIPE.
    func send(_ line: String) {
        PythonServer.ignoreSIGPIPE
        // One line at a time: lines over the pipe's atomic size from two threads would interleave.
        sendLock.withLock { try? child.stdin?.write(Data((line + "\n").utf8)) }
    }

    private let sendLock = NSLock()

    static let ignoreSIGPIPE: Void = { signal(SIGPIPE, SIG_IGN); return () }()

    func stop() { child.terminate(grace: .seconds(5)) }

    deinit { stop() }
}

/// Reads lines from a pipe on a background thread.
final class LineReader: @unchecked Sendable {
    private let cond = NSCondition()
    private var lines: [String] = []
    private var eof = false

    init(_ handle: PipeEnd) {
        let t = Thread { [weak self] in
            var buf = Data()
            // How much of buf is known to hold no newline: only new bytes are searched, so a line
            // of many megabytes (a 16 MiB file as base64) is read in linear time.
            var scanned = 0
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                buf.append(contentsOf: chunk)
                while let nl = buf[(buf.startIndex + scanned)...].firstIndex(of: 10) {
                    let line = String(decoding: buf[buf.startIndex..<nl], as: UTF8.self)
                    buf.removeSubrange(buf.startIndex...nl)
                    scanned = 0
                    guard let self else { return }
                    self.cond.lock(); self.lines.append(line); self.cond.signal(); self.cond.unlock()
                }
                scanned = buf.count
            }
            guard let self else { return }
            self.cond.lock(); self.eof = true; self.cond.broadcast(); self.cond.unlock()
        }
        t.start()
    }

    func next(timeout: TimeInterval) -> String? {
        let deadline = Date().addingTimeInterval(timeout)
        cond.lock(); defer { cond.unlock() }
        while lines.isEmpty && !eof {
            if !cond.wait(until: deadline) { break }
        }
        return lines.isEmpty ? nil : lines.removeFirst()
    }
}

/// A self-signed certificate for localhost/127.0.0.1 (and `addresses`), made with the openssl CLI for one test.
struct TestCertificate {
    let certPath: String
    let keyPath: String
    let dir: String

    init(addresses: [String] = []) throws {
        dir = TestPaths.tempDir("cert")
        certPath = dir + "/cert.pem"
        keyPath = dir + "/key.pem"
        let names = (["DNS:localhost", "IP:127.0.0.1"] + addresses.map { "IP:" + $0 }).joined(separator: ",")
        let r = try runProcess("/usr/bin/openssl", ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                                                    "-nodes", "-keyout", keyPath, "-out", certPath, "-days", "2",
                                                    "-subj", "/CN=localhost", "-addext", "subjectAltName=" + names])
        guard r.code == 0 else { throw TestFailure("openssl req failed: \(r.stderr)") }
    }

    func remove() { try? FileManager.default.removeItem(atPath: dir) }
}
