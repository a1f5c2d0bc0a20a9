import Foundation
@testable import Support
@testable import TestSupport
import Testing

/// desktop.stream of an X display (Xvfb) through x11vnc, which the node starts for the stream on a
/// private Unix socket: the operator's viewer sees the screen's pixels, its click reaches an X
/// client (`xev`), and when the viewer hangs up the invoke ends `{"status":"closed"}` with the
/// server stopped and its directory gone.
@Suite(.serialized) struct DesktopStreamX11Tests {
    final class Screen: @unchecked Sendable {
        let x: Xvfb
        let xev: XevWindow

        init(_ size: String = "1024x768x24") throws {
            x = try Xvfb(screens: [size])
            let painter = try XPainter(x.display)
            painter.fill(x: 0, y: 0, width: 1024, height: 768, rgb: 0x204080)
            painter.fill(x: 100, y: 100, width: 60, height: 40, rgb: 0xFF8000)
            // A small xev window in the middle records the operator's click.
            xev = try XevWindow(display: x.display, geometry: "100x100+500+350", events: ["button"])
        }

        /// The button presses xev has printed; the click comes through x11vnc, in its own time, so
        /// a test waits for the one it expects rather than reading once.
        var presses: [String] {
            xev.current.components(separatedBy: "\n\n").filter { $0.hasPrefix("ButtonPress event") }
        }

        func stop() {
            xev.stop()
            x.stop()
        }
    }

    @Test func theOperatorSeesTheScreenAndClicksOnIt() throws {
        let screen = try Screen(); defer { screen.stop() }
        let rig = try DesktopRig(desktop: "display: '\(screen.x.display)'"); defer { rig.stop() }
        let port = try rig.startStream("desk-1")
        let seen = try rig.view(port, pixels: [(10, 10), (120, 110)], click: (550, 400))
        #expect(seen["size"] == [1024, 768], "\(seen)")
        #expect(seen["pixels"]?["10,10"] == [0x20, 0x40, 0x80], "the background: \(seen)")
        #expect(seen["pixels"]?["120,110"] == [0xFF, 0x80, 0x00], "the orange box: \(seen)")

        let result = try #require(rig.result("desk-1"), "no result: \(rig.node.log.suffix(3000))")
        #expect(result["ok"] == true && result["payload"] == ["status": "closed"], "\(result)\n\(rig.brokerEvents)\n\(rig.node.log.suffix(3000))")
        #expect(rig.progress("desk-1") == ["probing local RFB server\n", "desktop stream attached\n"], "\(rig.progress("desk-1"))")
        let auth = try #require(rig.gw.waitFor("desktop_auth") { $0["id"] == "desk-1" })
        #expect(auth["ok"] == true && auth["version"] == "RFB 003.008" && auth["offered"] == [2], "x11vnc asked the gateway for the stream's password: \(auth)")
        let attached = try #require(rig.gw.waitFor("desktop_attached") { $0["id"] == "desk-1" })
        #expect(attached["auth"] == "vnc-password" && attached["passwordLength"] == 8, "\(attached)")
        let closed = try #require(rig.gw.waitFor("desktop_closed") { $0["id"] == "desk-1" })
        #expect((closed["largestFrame"]?.intValue ?? .max) <= 65536 && closed["textFrames"] == 0, "\(closed)")
        #expect((closed["fromNode"]?.intValue ?? 0) > 1024 * 768, "at least one full screen crossed: \(closed)")

        _ = waitUntil(timeout: 20) { !screen.presses.isEmpty }
        let press = screen.presses
        #expect(press.count == 1 && press.first?.contains("root:(550,400)") == true, "the click reached the X client: \(press)")
        let pid = try #require(rig.serverPid("x11vnc"), "\(rig.node.log.suffix(2000))")
        #expect(waitUntil(timeout: 5) { !DesktopRig.isAlive(pid) }, "x11vnc (pid \(pid)) was stopped")
        #expect(rig.streamDirectories.isEmpty, "the stream's private directory is gone: \(rig.streamDirectories)")
        #expect(rig.gw.schemaErrors.isEmpty, "\(rig.gw.schemaErrors)")
        #expect(rig.node.log.contains("desktop stream ended (the gateway closed"), "\(rig.node.log.suffix(1500))")
    }

    /// The gateway closes the attach socket (the operator closed the Control UI tab): the stream
    /// ends and the node is ready for the next one, which gets a server and password of its own.
    @Test func theGatewayClosesAndASecondStreamFollows() throws {
        let screen = try Screen(); defer { screen.stop() }
        let rig = try DesktopRig(desktop: "display: '\(screen.x.display)'"); defer { rig.stop() }
        _ = try rig.startStream("first")
        #expect(rig.gw.waitFor("desktop_auth", timeout: 30) { $0["id"] == "first" }?["ok"] == true, "\(rig.node.log.suffix(2000))")
        rig.gw.command(["cmd": "desktop_close", "id": "first"])
        let first = try #require(rig.result("first"), "\(rig.node.log.suffix(2000))")
        #expect(first["payload"] == ["status": "closed"], "\(first)")
        let second = try rig.startStream("second")
        let seen = try rig.view(second, pixels: [(10, 10)])
        #expect(seen["pixels"]?["10,10"] == [0x20, 0x40, 0x80], "\(seen)")
        #expect(try #require(rig.result("second"))["payload"] == ["status": "closed"])
        let pids = rig.node.log.components(separatedBy: "desktop stream attached: x11vnc (pid ").dropFirst().map { $0.prefix { $0.isNumber } }
        #expect(pids.count == 2 && pids[0] != pids[1], "one server per stream: \(pids)")
        #expect(rig.streamDirectories.isEmpty)
    }

    /// An agent and an operator never move one pointer: the operator opening the desktop stops
    /// the agent's execution (its held button is let go), computer.act waits while the stream
    /// runs, and afterwards the execution goes on once it has taken a new screenshot.
    @Test func computerControlStepsBackWhileAnOperatorHasTheDesktop() throws {
        let screen = try Screen(); defer { screen.stop() }
        let rig = try DesktopRig(desktop: "display: '\(screen.x.display)'",
                                 others: "computer: { enabled: true, display: '\(screen.x.display)' }, screen: { enabled: true, display: '\(screen.x.display)' }")
        defer { rig.stop() }
        let exec = "33333333-3333-4333-8333-333333333333"
        func call(_ command: String, _ params: JSONValue) throws -> JSONValue {
            try #require(rig.gw.invoke(command, paramsJSON: params.jsonString(), timeoutMs: 30_000), "\(rig.node.log.suffix(2000))")
        }
        func snapshot() throws -> String {
            let shot = try call("screen.snapshot", ["executionId": .string(exec), "maxWidth": 1024, "format": "jpeg"])
            return try #require(shot["payload"]?["displayFrameId"]?.stringValue, "\(shot)")
        }
        func click(_ frame: String) throws -> JSONValue {
            try call("computer.act", ["action": "left_click", "executionId": .string(exec), "x": 550, "y": 400,
                                      "displayFrameId": .string(frame), "refWidth": 1024])
        }
        let before = try snapshot()
        #expect(try click(before)["ok"] == true)
        #expect(try call("computer.act", ["action": "left_mouse_down", "executionId": .string(exec)])["ok"] == true)
        #expect(waitUntil(timeout: 5) { screen.presses.count == 2 }, "\(screen.presses)")

        _ = try rig.startStream("operator")
        #expect(rig.gw.waitFor("progress", timeout: 30) { $0["id"] == "operator" && $0["chunk"] == "desktop stream attached\n" } != nil,
                "\(rig.node.log.suffix(2000))")
        #expect(waitUntil(timeout: 5) { rig.node.log.contains("stopped: an operator opened the desktop through desktop.stream") }, "\(rig.node.log.suffix(2000))")
        #expect(waitUntil(timeout: 5) {
            screen.xev.current.components(separatedBy: "ButtonRelease event").count == 3
        }, "the agent's held button was let go")
        let busy = try call("computer.act", ["action": "left_click", "executionId": .string(exec)])
        #expect(busy["error"]?["code"] == "COMPUTER_HOST_BUSY" && busy["error"]?["message"]?.stringValue?.contains("desktop.stream") == true, "\(busy)")

        rig.gw.command(["cmd": "desktop_close", "id": "operator"])
        #expect(rig.result("operator")?["payload"] == ["status": "closed"])
        let stale = try click(before)
        #expect(stale["error"]?["code"] == "COMPUTER_USER_OVERRIDE", "the desktop may have changed under the operator: \(stale)")
        #expect(try click(try snapshot())["ok"] == true, "a new screenshot lets the execution go on")
        #expect(waitUntil(timeout: 5) { screen.presses.count == 3 }, "\(screen.presses)")
    }

    /// doctor names the server a stream would start, or what is missing.
    @Test func doctorSaysWhichServerAStreamWouldUse() throws {
        let screen = try Screen(); defer { screen.stop() }
        let rig = try DesktopRig(desktop: "display: '\(screen.x.display)'"); defer { rig.stop() }
        let auto = try rig.node.cli(["doctor"])
        #expect(auto.stdout.contains("desktop.stream would start x11vnc (/usr/bin/x11vnc) for X display \(screen.x.display)"), "\(auto.stdout)")
        // Forced: the X display is served as asked; a desktop that is not there is refused, saying what is missing.
        rig.node.rewriteConfig(gatewaySection: "url: '\(rig.gw.url)'", extra: "capabilities: { desktop: { enabled: true, backend: 'x11', display: '\(screen.x.display)' } }")
        let x11 = try rig.node.cli(["doctor"])
        #expect(x11.stdout.contains("desktop.stream would start x11vnc (/usr/bin/x11vnc) for X display \(screen.x.display)")
                && x11.stdout.contains("(capabilities.desktop.backend \"x11\")"), "\(x11.stdout)")
        for (backend, missing) in [("gnome", "org.gnome.Mutter.RemoteDesktop is not on the session bus"), ("kde", "KWin's ScreenShot2 and the compositor's socket are not both there"),
                                   ("wayland", "no compositor socket is there")] {
            rig.node.rewriteConfig(gatewaySection: "url: '\(rig.gw.url)'", extra: "capabilities: { desktop: { enabled: true, backend: '\(backend)', waylandDisplay: '/nonexistent/wayland-9' } }")
            let refused = try rig.node.cli(["doctor"])
            #expect(refused.stdout.contains("capabilities.desktop.backend is \"\(backend)\" but") && refused.stdout.contains(missing), "\(backend): \(refused.stdout)")
        }
        rig.node.rewriteConfig(gatewaySection: "url: '\(rig.gw.url)'", extra: "capabilities: { desktop: { enabled: true, server: 'external', port: 5999 } }")
        let external = try rig.node.cli(["doctor"])
        #expect(external.stdout.contains("127.0.0.1:5999") && external.stdout.contains("passwordFile is not set"), "\(external.stdout)")
    }

    /// Nobody at the device any more: the running stream ends, and a new one is refused the way
    /// every foreground command is.
    @Test func backgroundPresenceEndsTheStreamAndRefusesNewOnes() throws {
        let screen = try Screen(); defer { screen.stop() }
        let rig = try DesktopRig(desktop: "display: '\(screen.x.display)'"); defer { rig.stop() }
        _ = try rig.startStream("live")
        #expect(rig.gw.waitFor("desktop_auth", timeout: 30) { $0["id"] == "live" }?["ok"] == true, "\(rig.node.log.suffix(2000))")
        let bg = try rig.node.cli(["presence", "background"])
        #expect(bg.code == 0, "\(bg.stderr)")
        let ended = try #require(rig.result("live"), "the stream did not end: \(rig.node.log.suffix(2000))")
        #expect(ended["ok"] == false && ended["error"]?["code"] == "NODE_BACKGROUND_UNAVAILABLE", "\(ended)")
        #expect(rig.gw.waitFor("desktop_closed") { $0["id"] == "live" } != nil)
        let pid = try #require(rig.serverPid("x11vnc"))
        #expect(waitUntil(timeout: 5) { !DesktopRig.isAlive(pid) })
        _ = try rig.startStream("refused")
        let refused = try #require(rig.result("refused"))
        #expect(refused["error"]?["code"] == "NODE_BACKGROUND_UNAVAILABLE", "\(refused)")
        #expect(rig.streamDirectories.isEmpty)
    }
}
