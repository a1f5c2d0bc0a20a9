import Foundation
@testable import Support
@testable import TestSupport
import Testing

/// The desktop is the most powerful thing a node can hand out, so every way around its checks is
/// tried here, each next to the legitimate use that must still work: a VNC server without a
/// password, a gateway that does not know the stream's password, a ticket that is not the one the
/// stream was given, params that point the attach socket elsewhere, a password file others can
/// read, and another local account reaching the node's own server.
@Suite(.serialized) struct DesktopStreamAttackTests {
    typealias Screen = DesktopStreamX11Tests.Screen

    /// An x11vnc the user runs on 127.0.0.1:port, with or without a password file.
    static func externalServer(_ display: String, port: Int, passwordFile: String?) throws -> BackgroundProcess {
        var args = ["-display", display, "-rfbport", String(port), "-localhost", "-forever", "-shared", "-norc", "-nossl", "-noipv6", "-quiet"]
        args += passwordFile.map { ["-passwdfile", $0] } ?? ["-nopw"]
        let p = try BackgroundProcess("/usr/bin/x11vnc", args)
        guard waitUntil(timeout: 15, { Self.accepts(port) }) else {
            p.stop()
            throw TestFailure("x11vnc did not listen on \(port): \(p.log.suffix(1000))")
        }
        return p
    }

    static func accepts(_ port: Int) -> Bool {
        guard let addresses = try? TCPSocket.resolve(host: "127.0.0.1", port: port),
              let socket = try? TCPSocket.connect(addresses, timeout: .seconds(1)) else { return false }
        socket.close()
        return true
    }

    @Test func aServerWithoutAPasswordIsRefusedAndOneWithAPasswordWorks() throws {
        let screen = try Screen(); defer { screen.stop() }
        let dir = TestPaths.tempDir("desktop-ext"); defer { try? FileManager.default.removeItem(atPath: dir) }
        // The attack: anybody on the machine can drive a passwordless server, so the node refuses it.
        let open = try freeLoopbackPort()
        let openServer = try Self.externalServer(screen.x.display, port: open, passwordFile: nil); defer { openServer.stop() }
        let rig = try DesktopRig(desktop: "server: 'external', port: \(open)"); defer { rig.stop() }
        _ = try rig.startStream("open")
        let refused = try #require(rig.result("open"), "\(rig.node.log.suffix(2000))")
        #expect(refused["ok"] == false && refused["error"]?["message"]?.stringValue?.hasPrefix("refusing unauthenticated loopback RFB server") == true,
                "\(refused)")
        #expect(rig.gw.all("desktop_attached").isEmpty, "nothing reached the gateway")

        // The legitimate use: the same kind of server with a password, which the node reads from a 0600 file.
        let secret = dir + "/vnc-password"
        try "s3cret-pw\n".write(toFile: secret, atomically: false, encoding: .utf8)
        chmod(secret, 0o600)
        let guarded = try freeLoopbackPort()
        let guardedServer = try Self.externalServer(screen.x.display, port: guarded, passwordFile: secret); defer { guardedServer.stop() }
        let ok = try DesktopRig(desktop: "server: 'external', port: \(guarded), passwordFile: '\(secret)'"); defer { ok.stop() }
        let port = try ok.startStream("guarded")
        let seen = try ok.view(port, pixels: [(10, 10)])
        #expect(seen["pixels"]?["10,10"] == [0x20, 0x40, 0x80], "\(seen)\n\(ok.brokerEvents)\n\(ok.node.log.suffix(2000))")
        #expect(try #require(ok.result("guarded"))["payload"] == ["status": "closed"])
        #expect(ok.gw.waitFor("desktop_auth") { $0["id"] == "guarded" }?["ok"] == true)
        #expect(guardedServer.isRunning, "the user's own server is left running")

        // A password file other accounts can read is refused, with what to do.
        chmod(secret, 0o644)
        _ = try ok.startStream("readable")
        let loose = try #require(ok.result("readable"))
        #expect(loose["ok"] == false && loose["error"]?["message"]?.stringValue?.contains("chmod 600") == true, "\(loose)")
    }

    /// The gateway answers the VNC challenge with the wrong password: x11vnc refuses it, the
    /// invoke fails and the server the node started is gone.
    @Test func aGatewayWithoutTheStreamsPasswordGetsNoDesktop() throws {
        let screen = try Screen(); defer { screen.stop() }
        let rig = try DesktopRig(desktop: "display: '\(screen.x.display)'"); defer { rig.stop() }
        _ = try rig.startStream("wrong", ["wrongPassword": true])
        let auth = try #require(rig.gw.waitFor("desktop_auth", timeout: 30) { $0["id"] == "wrong" }, "\(rig.brokerEvents)\n\(rig.node.log.suffix(2000))")
        #expect(auth["ok"] == false, "x11vnc took a wrong password: \(auth)")
        // x11vnc itself refuses the answer; the node, which splices after the version exchange,
        // sees the gateway close and ends the invoke.
        #expect(rig.result("wrong") != nil)
        #expect(rig.gw.all("desktop_viewer_connected").isEmpty, "no viewer got a desktop")
        let pid = try #require(rig.serverPid("x11vnc"), "\(rig.node.log.suffix(2000))")
        #expect(waitUntil(timeout: 5) { !DesktopRig.isAlive(pid) })
        #expect(rig.streamDirectories.isEmpty)
        // The right password still works on the same node.
        let port = try rig.startStream("right")
        #expect(try rig.view(port, pixels: [(10, 10)])["pixels"]?["10,10"] == [0x20, 0x40, 0x80])
    }

    /// Params name one ticket and the socket presents another, or the attach path leads elsewhere:
    /// the gateway refuses a ticket it did not mint for this stream (401), and the node refuses an
    /// attach path that is not its own ticket's before it starts anything.
    @Test func anotherTicketOrAnotherPathIsRefused() throws {
        let screen = try Screen(); defer { screen.stop() }
        let rig = try DesktopRig(desktop: "display: '\(screen.x.display)'"); defer { rig.stop() }
        let minted = String(repeating: "a1", count: 24), forged = String(repeating: "b2", count: 24)
        _ = try rig.startStream("forged", ["ticket": .string(forged), "attachTicket": .string(minted)])
        let refused = try #require(rig.result("forged"), "\(rig.node.log.suffix(2000))")
        #expect(refused["ok"] == false && refused["error"]?["message"]?.stringValue?.contains("desktop stream attach failed") == true, "\(refused)")
        #expect(rig.gw.waitFor("desktop_attach_refused") { $0["reason"] == "ticket" } != nil)
        #expect(rig.streamDirectories.isEmpty, "the server started for it is gone")

        for path in ["/node-desktop/attach?ticket=\(forged)", "//evil.example/node-desktop/attach?ticket=\(minted)",
                     "http://127.0.0.1:1/x?ticket=\(minted)", "/node-desktop/attach?ticket=\(minted)&next=/x"] {
            let id = "path-\(path.count)"
            _ = try rig.startStream(id, ["params": ["ticket": .string(minted), "attachPath": .string(path)]])
            let r = try #require(rig.result(id))
            #expect(r["ok"] == false && r["error"]?["message"] == "INVALID_REQUEST: desktop stream ticket does not match attachPath", "\(path): \(r)")
        }
        #expect(rig.node.log.components(separatedBy: "started x11vnc (pid").count == 2, "a server only for the forged ticket, none for a refused path")
        // The stream the gateway really minted still works.
        let port = try rig.startStream("minted")
        #expect(try rig.view(port, pixels: [(10, 10)])["pixels"]?["10,10"] == [0x20, 0x40, 0x80])
    }

    /// The server the node starts listens on no TCP port and sits in a 0700 directory, so no other
    /// account on the machine can reach it while the stream runs.
    @Test func theNodesOwnServerIsReachableOnlyByTheNode() throws {
        let screen = try Screen(); defer { screen.stop() }
        let rig = try DesktopRig(desktop: "display: '\(screen.x.display)'"); defer { rig.stop() }
        _ = try rig.startStream("live")
        #expect(rig.gw.waitFor("desktop_auth", timeout: 30) { $0["id"] == "live" }?["ok"] == true, "\(rig.node.log.suffix(2000))")
        let pid = try #require(rig.serverPid("x11vnc"), "\(rig.node.log.suffix(2000))")
        let listening = try runProcess("/usr/bin/ss", ["-H", "-ltnp"])
        #expect(!listening.stdout.contains("pid=\(pid),"), "x11vnc listens on TCP: \(listening.stdout)")
        let dirs = rig.streamDirectories
        #expect(dirs.count == 1, "\(dirs)")
        if let d = dirs.first {
            let attrs = try FileManager.default.attributesOfItem(atPath: rig.node.dir + "/state/" + d)
            #expect((attrs[.posixPermissions] as? Int) == 0o700, "\(attrs)")
            // An unprivileged account cannot connect to the socket inside.
            let probe = try runProcess("/usr/bin/setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/python3", "-c",
                                                            "import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])",
                                                            rig.node.dir + "/state/" + d + "/vnc.sock"])
            #expect(probe.code != 0 && probe.stderr.contains("PermissionError"), "nobody reached the node's VNC server: \(probe)")
        }
        rig.gw.command(["cmd": "desktop_close", "id": "live"])
        #expect(rig.result("live")?["payload"] == ["status": "closed"])
    }
}
