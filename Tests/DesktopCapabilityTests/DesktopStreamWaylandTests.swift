import Foundation
@testable import Support
@testable import TestSupport
import Testing

/// desktop.stream of a wlroots compositor (sway, headless) through wayvnc on the node's private
/// socket. wayvnc 0.5 cannot ask for a password, so the node answers the gateway's side of VNC
/// authentication itself; a gateway with the wrong password gets nothing from the compositor.
@Suite(.serialized, .enabled(if: Sway.available && FileManager.default.isExecutableFile(atPath: "/usr/bin/wayvnc")
                                && FileManager.default.isExecutableFile(atPath: "/usr/bin/wev"), "needs root, sway, wayvnc and wev"))
struct DesktopStreamWaylandTests {
    @Test func theOperatorSeesTheCompositorAndClicksAWaylandClient() throws {
        let sway = try Sway(outputs: [(800, 600, "#204080")]); defer { sway.stop() }
        let rig = try DesktopRig(desktop: "waylandDisplay: '\(sway.socket)'"); defer { rig.stop() }
        let port = try rig.startStream("wl-1")
        // While the stream waits for its viewer, wayvnc listens on its private socket only.
        #expect(rig.gw.waitFor("desktop_auth", timeout: 30) { $0["id"] == "wl-1" }?["ok"] == true, "\(rig.node.log.suffix(2000))")
        let running = try #require(rig.serverPid("wayvnc"))
        let listening = try runProcess("/usr/bin/ss", ["-H", "-ltnp"])
        #expect(!listening.stdout.contains("pid=\(running),"), "wayvnc listens on TCP: \(listening.stdout)")
        let seen = try rig.view(port, pixels: [(10, 10), (790, 590)])
        #expect(seen["size"] == [800, 600], "\(seen)\n\(rig.brokerEvents)\n\(rig.node.log.suffix(2000))")
        #expect(seen["pixels"]?["10,10"] == [0x20, 0x40, 0x80] && seen["pixels"]?["790,590"] == [0x20, 0x40, 0x80], "\(seen)")
        let result = try #require(rig.result("wl-1"), "\(rig.node.log.suffix(2000))")
        #expect(result["payload"] == ["status": "closed"], "\(result)")
        let auth = try #require(rig.gw.all("desktop_auth").first { $0["id"] == "wl-1" })
        #expect(auth["offered"] == [2], "the node offered VNC authentication for wayvnc: \(auth)")
        #expect(waitUntil(timeout: 5) { !DesktopRig.isAlive(running) }, "wayvnc (pid \(running)) was stopped")
        #expect(rig.streamDirectories.isEmpty)

        // A Wayland client fills the output; the operator's click reaches it.
        let log = TestPaths.tempDir("wev") + "/wev.log"
        defer { try? FileManager.default.removeItem(atPath: (log as NSString).deletingLastPathComponent) }
        let wev = try BackgroundProcess("/bin/sh", ["-c", "exec /usr/bin/stdbuf -oL /usr/bin/wev > \(log) 2>&1"],
                                        env: ["XDG_RUNTIME_DIR": sway.runtimeDir, "WAYLAND_DISPLAY": sway.socket, "PATH": "/usr/bin:/bin"])
        defer { wev.stop() }
        var events: String { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" }
        #expect(waitUntil(timeout: 10) { events.contains("activated") }, "wev did not get a window: \(events)")
        let second = try rig.startStream("wl-2")
        let viewed = try rig.view(second, click: (400, 300))
        let closed = rig.result("wl-2")
        // On failure: what the viewer saw, how the stream ended, and what the node logged.
        let story = "viewer: \(viewed)\nresult: \(closed.map { $0.jsonString() } ?? "none")\n\(rig.brokerEvents)\n\(rig.node.log.suffix(2000))"
        #expect(waitUntil(timeout: 5) { events.contains("button: 272 (left), state: 1 (pressed)") }, "the click did not reach wev: \(events.suffix(1500))\n\(story)")
        #expect(try #require(closed, "\(story)")["payload"] == ["status": "closed"], "\(story)")
    }

    /// The attack: a gateway that does not know this stream's password. The node checks the
    /// answer itself and never lets the bytes through to wayvnc's unauthenticated session.
    @Test func aWrongPasswordGetsNothingFromTheCompositor() throws {
        let sway = try Sway(outputs: [(640, 480, "#336699")]); defer { sway.stop() }
        let rig = try DesktopRig(desktop: "waylandDisplay: '\(sway.socket)'"); defer { rig.stop() }
        _ = try rig.startStream("wrong", ["wrongPassword": true])
        let auth = try #require(rig.gw.waitFor("desktop_auth", timeout: 30) { $0["id"] == "wrong" }, "\(rig.brokerEvents)\n\(rig.node.log.suffix(2000))")
        #expect(auth["ok"] == false, "\(auth)")
        let result = try #require(rig.result("wrong"))
        #expect(result["ok"] == false && result["error"]?["message"]?.stringValue?.contains("VNC password challenge was wrong") == true, "\(result)")
        #expect(rig.gw.all("desktop_viewer_connected").isEmpty)
        let pid = try #require(rig.serverPid("wayvnc"))
        #expect(waitUntil(timeout: 5) { !DesktopRig.isAlive(pid) })
        #expect(rig.streamDirectories.isEmpty)
        // With the right password the same node streams.
        let port = try rig.startStream("right")
        #expect(try rig.view(port, pixels: [(10, 10)])["pixels"]?["10,10"] == [0x33, 0x66, 0x99])
    }
}
