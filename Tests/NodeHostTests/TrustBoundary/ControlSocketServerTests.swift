import Foundation
@testable import Support
@testable import TestSupport
import Testing

/// The CLI talks to a control socket only when its server is the node's: a socket in the state
/// directory served by another account (reached through its directory or its symbolic link) gets
/// no invoke and no params; the real daemon's socket still serves.
@Suite(.serialized) struct ControlSocketServerTests {
    @Test(.enabled(if: getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv"), "needs root to serve a socket as another account"))
    func aSocketServedByAnotherAccountGetsNothing() throws {
        // In /tmp itself: the suite's TMPDIR is a 0700 directory the other account cannot enter.
        let theirs = "/tmp/ocn-other-account-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: theirs, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: theirs) }
        let state = theirs + "/state"
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true)
        _ = try runProcess("/bin/chown", ["-R", "65534:65534", theirs])
        chmod(theirs, 0o755)
        // Their "daemon": accepts, records what it was sent, answers like a node would.
        let script = """
            import socket, sys, os
            s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1] + "/control.sock"); s.listen(4)
            print("listening", flush=True)
            while True:
                c, _ = s.accept()
                try:
                    data = c.recv(65536)
                    if data:
                        open(sys.argv[1] + "/received", "ab").write(data)
                    c.sendall(b'{"ok":true,"payload":{"impostor":true}}\\n')
                except OSError:
                    pass
                c.close()
            """
        let server = try BackgroundProcess("/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/python3", "-u", "-c", script, state])
        defer { server.stop() }
        #expect(waitUntil(timeout: 10) { server.log.contains("listening") }, "\(server.log)")
        let link = "/tmp/ocn-planted-link-\(UUID().uuidString.prefix(8))/state"
        try FileManager.default.createDirectory(atPath: PathName.directory(link), withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: PathName.directory(link)) }
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: state)
        // The full program and the launcher installed in front of it (which asks the daemon itself).
        for (dir, program) in [(state, TestPaths.nodeBinary), (link, TestPaths.nodeBinary), (state, TestPaths.launcherBinary), (link, TestPaths.launcherBinary)] {
            let config = TestPaths.tempDir("cfg") + "/config.json5"
            defer { try? FileManager.default.removeItem(atPath: PathName.directory(config)) }
            try "{ node: { stateDir: '\(dir)' }, gateway: { discovery: { lan: false } } }".write(toFile: config, atomically: true, encoding: .utf8)
            let r = try runProcess(program, ["invoke", "device.info", "--params", #"{"secret":"do-not-send"}"#, "--config", config])
            // Said once, however many programs the command line passed through.
            #expect(r.stderr.components(separatedBy: "is served by another account (nobody)").count == 2, "\(program) \(dir): \(r.stderr)")
            #expect(!r.stdout.contains("impostor"), "\(program) \(dir): \(r.stdout)")
        }
        #expect(!FileManager.default.fileExists(atPath: state + "/received"), "the other account's socket was sent a request")
    }

    @Test func theRealDaemonsSocketServes() throws {
        let node = NodeUnderTest(gatewaySection: "discovery: { lan: false }")
        defer { node.cleanup() }
        try node.start()
        #expect(waitUntil(timeout: 20) { FileManager.default.fileExists(atPath: node.dir + "/state/control.sock") }, "\(node.log)")
        let r = try node.cli(["invoke", "device.info"])
        #expect(r.code == 0 && r.stdout.contains("appVersion") && !r.stderr.contains("another account"), "\(r.stdout)\(r.stderr)")
    }
}
