@testable import ComputerCapability
@testable import Config
import Foundation
@testable import Kit
@testable import Support
@testable import TestSupport
import Testing

/// computer.act through the daemon and the test gateway on Xvfb, with `xev` (x11-utils) as the real
/// X client that records what arrives: pointer positions, buttons and keysyms.
@Suite(.serialized) struct ComputerControlTests {
    final class Rig: @unchecked Sendable {
        let x: Xvfb
        let gw: TestGateway
        let node: NodeUnderTest
        let xev: XevWindow

        init(screen: String = "1920x1080x24", monitors: [(String, Int, Int, Int, Int)] = []) throws {
            x = try Xvfb(screens: [screen])
            if !monitors.isEmpty {
                let painter = try XPainter(x.display)
                for m in monitors { painter.setMonitor(m.0, x: m.1, y: m.2, width: m.3, height: m.4) }
            }
            let size = screen.split(separator: "x")
            xev = try XevWindow(display: x.display, geometry: "\(size[0])x\(size[1])+0+0", events: ["keyboard", "button", "mouse"])
            gw = try TestGateway(stateFile: TestPaths.tempDir("gw") + "/gw.json", args: ["--auto-approve"])
            node = NodeUnderTest(gatewayURL: gw.url, extra: "capabilities: { computer: { enabled: true }, screen: { enabled: true, display: '\(x.display)' }, " +
                                 "canvas: { enabled: false }, camera: { enabled: false } }")
            node.extraEnv["DISPLAY"] = x.display
            try node.start()
            guard gw.waitFor("hello") != nil else { throw TestFailure("no hello: \(node.log)") }
        }

        func call(_ command: String, _ params: JSONValue) throws -> JSONValue {
            try #require(gw.invoke(command, paramsJSON: params.jsonString(), timeoutMs: 30_000), "\(node.log)")
        }

        /// A snapshot as the agent takes it: refWidth 1280, JPEG.
        func snapshot(screenIndex: Int = 0, execution: String = "11111111-1111-4111-8111-111111111111") throws -> JSONValue {
            let r = try call("screen.snapshot", ["executionId": .string(execution), "screenIndex": .number(Double(screenIndex)),
                                                 "maxWidth": 1280, "quality": 0.85, "format": "jpeg"])
            return try #require(r["payload"], "\(r)")
        }

        func act(_ params: JSONValue) throws -> JSONValue { try call("computer.act", params) }

        /// xev's record, with every event of the input handled so far.
        var events: String { xev.settled }

        /// Root positions of every event of this kind ("ButtonPress"), with the button or keysym line.
        func recorded(_ kind: String) -> [(x: Int, y: Int, detail: String)] {
            let blocks = events.components(separatedBy: "\n\n").filter { $0.hasPrefix(kind + " event") }
            return blocks.map { b in
                var x = -1, y = -1
                if let r = b.range(of: "root:(") {
                    let nums = b[r.upperBound...].prefix { $0 != ")" }.split(separator: ",")
                    x = Int(nums[0]) ?? -1; y = Int(nums[1]) ?? -1
                }
                let detail = b.split(separator: "\n").map { $0.trimmed() }.first { $0.hasPrefix("state") } ?? ""
                return (x, y, detail)
            }
        }

        func stop() { node.cleanup(); gw.stop(); xev.stop(); x.stop() }
    }

    static let exec = "11111111-1111-4111-8111-111111111111"

    @Test func clicksLandOnThePixelTheAgentMeant() throws {
        let r = try Rig(); defer { r.stop() }
        let shot = try r.snapshot()
        #expect(shot["width"] == 1280 && shot["height"] == 720 && shot["screenIndex"] == 0, "\(shot)")
        let frame = try #require(shot["displayFrameId"]?.stringValue)
        #expect(shot["capturedAtMs"]?.doubleValue ?? 0 > 0)
        func at(_ action: String, _ x: Int, _ y: Int, _ extra: [String: JSONValue] = [:]) throws -> JSONValue {
            var p: [String: JSONValue] = ["action": .string(action), "executionId": .string(Self.exec), "x": .number(Double(x)),
                                          "y": .number(Double(y)), "displayFrameId": .string(frame), "refWidth": 1280, "screenIndex": 0]
            p.merge(extra) { _, n in n }
            return try r.act(.object(p))
        }
        let click = try at("left_click", 640, 360)
        #expect(click["payload"] == ["ok": true], "exactly {ok: true}: \(click)")
        _ = try at("right_click", 100, 50)
        _ = try at("double_click", 1279, 719)
        _ = try at("left_click", 10, 10, ["modifiers": "shift"])
        _ = try at("scroll", 400, 400, ["scrollDirection": "up", "scrollAmount": 2])
        _ = try at("left_click_drag", 200, 150, ["fromX": 100, "fromY": 100, "durationMs": 200])
        let presses = r.recorded("ButtonPress")
        let releases = r.recorded("ButtonRelease")
        let summary = presses.map { "\($0.x),\($0.y) \($0.detail)" }
        #expect(presses.count == 8, "\(summary)")
        guard presses.count == 8 else { return }
        #expect(presses[0].x == 960 && presses[0].y == 540, "640,360 at refWidth 1280 is 960,540 on 1920x1080")
        #expect(presses[1].x == 150 && presses[1].y == 75 && r.events.contains("button 3"))
        #expect(presses[2].x == 1919 && presses[2].y == 1079 && presses[3].x == 1919, "double click, clamped inside the screen")
        #expect(presses[4].detail.contains("state 0x1"), "shift held during the click: \(presses[4].detail)")
        #expect(presses[5].x == 600 && presses[6].x == 600 && r.events.contains("button 4"), "two scroll ticks up at 600,600")
        #expect(presses[7].x == 150 && presses[7].y == 150, "drag starts at fromX/fromY")
        #expect(releases.last?.x == 300 && releases.last?.y == 225, "drag ends at x/y: \(releases.map { "\($0.x),\($0.y)" })")
        #expect(r.events.contains("MotionNotify"), "the drag moved through the path")
        // Every scroll direction is its X button: up 4, down 5, left 6, right 7.
        for (direction, button) in [("down", 5), ("left", 6), ("right", 7)] {
            let before = r.recorded("ButtonPress").count
            _ = try at("scroll", 400, 400, ["scrollDirection": .string(direction), "scrollAmount": 1])
            let now = r.recorded("ButtonPress")
            #expect(now.count == before + 1, "\(direction)")
            #expect(r.events.components(separatedBy: "\n\n").filter { $0.hasPrefix("ButtonPress") }.last?.contains("button \(button)") == true,
                    "\(direction) is button \(button)")
        }
    }

    @Test func typingKeysAndHeldInputAreReleasedWhenTheExecutionCloses() throws {
        let r = try Rig(); defer { r.stop() }
        _ = try r.snapshot()
        #expect(try r.act(["action": "type", "executionId": .string(Self.exec), "text": "Hi 5%é й€"])["payload"] == ["ok": true])
        #expect(try r.act(["action": "key", "executionId": .string(Self.exec), "keys": "ctrl+shift+t"])["payload"] == ["ok": true])
        #expect(try r.act(["action": "key", "executionId": .string(Self.exec), "keys": "Return"])["payload"] == ["ok": true])
        let keysyms = r.recorded("KeyPress").compactMap { e -> String? in
            guard let r = e.detail.range(of: "keysym 0x") else { return nil }
            return String(e.detail[r.upperBound...].prefix { $0 != "," })
        }
        // H (with Shift), i, space, 5, % (with Shift), é, space, й, €, then ctrl, shift, T, Return.
        let expected = ["ffe1", "48", "69", "20", "35", "ffe1", "25", "e9", "20", "1000439", "10020ac", "ffe3", "ffe1", "54", "ff0d"]
        #expect(keysyms == expected, "\(keysyms)")
        // Held input: released when the execution closes.
        let held = try r.act(["action": "left_mouse_down", "executionId": .string(Self.exec)])
        #expect(held["payload"] == ["ok": true], "\(held)")
        #expect(r.recorded("ButtonPress").count == 1 && r.recorded("ButtonRelease").isEmpty)
        let close = try r.act(["action": "__close_execution", "executionId": .string(Self.exec), "reason": "done"])
        #expect(close["payload"] == ["ok": true])
        #expect(r.recorded("ButtonRelease").count == 1, "close released the button")
        let up = try r.act(["action": "left_mouse_up", "executionId": .string(Self.exec)])
        #expect(up["error"]?["message"]?.stringValue?.contains("left button is not held by computer control") == true, "\(up)")
    }

    @Test func heldInputIsReleasedWhenTheDaemonStops() throws {
        let r = try Rig(); defer { r.stop() }
        #expect(try r.act(["action": "left_mouse_down", "executionId": .string(Self.exec)])["payload"] == ["ok": true])
        #expect(try r.act(["action": "hold_key", "executionId": .string(Self.exec), "keys": "shift", "durationMs": 100])["payload"] == ["ok": true])
        #expect(r.recorded("ButtonRelease").isEmpty)
        r.node.stop()  // SIGTERM
        #expect(r.recorded("ButtonRelease").count == 1, "SIGTERM released the held button")
    }

    /// SIGTERM in the middle of a 10 s hold_key: the invoke is cancelled, the hold's CancelFlag
    /// ends it at once, the key is let go and the daemon exits well before the hold would have.
    @Test func aLongHoldEndsAtOnceOnSigterm() throws {
        let r = try Rig(); defer { r.stop() }
        r.gw.command(["cmd": "invoke", "id": "hold-1", "command": "computer.act", "timeoutMs": 30_000,
                      "paramsJSON": .string((["action": "hold_key", "executionId": .string(Self.exec), "keys": "shift",
                                              "durationMs": 10_000] as JSONValue).jsonString())])
        #expect(waitUntil(timeout: 10) { r.events.contains("KeyPress") },
                "the hold did not start: \(r.node.log.suffix(1500))")
        let daemon = try #require(r.node.process)
        let sent = Date()
        kill(daemon.pid, SIGTERM)
        #expect(daemon.child.waitForExit(within: .seconds(8)), "the daemon waited for the hold: \(r.node.log.suffix(1500))")
        #expect(Date().timeIntervalSince(sent) < 8)
        #expect(waitUntil(timeout: 5) { r.events.contains("KeyRelease") }, "the held key was not released")
    }

    @Test func heldInputIsReleasedWhenTheGatewayGoesAway() throws {
        let r = try Rig(); defer { r.stop() }
        #expect(try r.act(["action": "left_mouse_down", "executionId": .string(Self.exec)])["payload"] == ["ok": true])
        r.gw.kill9()
        #expect(waitUntil(timeout: 10) { r.recorded("ButtonRelease").count == 1 }, "the lost session released the button: \(r.node.log)")
        #expect(r.node.log.contains("gateway disconnected"))
    }

    /// A person clicks (through another master device's XTEST device, as xinput shows a second
    /// mouse): the execution stops, its held button is released, and its next action is refused
    /// until it takes a new screenshot.
    @Test func aPersonAtTheDeskStopsTheExecution() throws {
        let r = try Rig(); defer { r.stop() }
        let work = TestPaths.tempDir("person")
        let helper = work + "/person_click"
        let cc = try runProcess("/usr/bin/gcc", ["-O2", "-o", helper, TestPaths.repoRoot + "/Tests/fakes/person_click.c", "-lXtst", "-lXi", "-lX11"])
        #expect(cc.code == 0, "\(cc.stderr)")
        let master = try runProcess("/usr/bin/xinput", ["create-master", "Person"], env: ["DISPLAY": r.x.display])
        #expect(master.code == 0, "\(master.stderr)")
        let frame = try #require(try r.snapshot()["displayFrameId"]?.stringValue)
        let click: JSONValue = ["action": "left_click", "executionId": .string(Self.exec), "x": 10, "y": 10, "displayFrameId": .string(frame), "refWidth": 1280]
        #expect(try r.act(click)["payload"] == ["ok": true], "our own input is not a person")
        #expect(try r.act(["action": "left_mouse_down", "executionId": .string(Self.exec)])["payload"] == ["ok": true])
        let person = try runProcess(helper, [r.x.display, "Person XTEST pointer"])
        #expect(person.code == 0, "\(person.stderr)")
        #expect(waitUntil(timeout: 5) { r.node.log.contains("stopped: a person used the keyboard or mouse") }, "\(r.node.log.suffix(1500))")
        let refused = try r.act(click)
        #expect(refused["error"]?["code"] == "COMPUTER_USER_OVERRIDE" && refused["error"]?["message"]?.stringValue?.contains("take a new screenshot") == true, "\(refused)")
        #expect(r.recorded("ButtonRelease").count >= 2, "the held button was released")
        _ = try r.snapshot()
        #expect(try r.act(click)["payload"] == ["ok": true], "a new screenshot lets the execution go on")
        try? FileManager.default.removeItem(atPath: work)
    }

    @Test func staleFramesBusyExecutionsAndUnsupportedActions() throws {
        let r = try Rig(); defer { r.stop() }
        let frame = try #require(try r.snapshot()["displayFrameId"]?.stringValue)
        func code(_ p: JSONValue) throws -> String? { try r.act(p)["error"]?["code"]?.stringValue }
        let click: [String: JSONValue] = ["action": "left_click", "executionId": .string(Self.exec), "x": 10, "y": 10, "refWidth": 1280]
        #expect(try code(.object(click)) == "COMPUTER_STALE_FRAME", "no displayFrameId")
        var other = click; other["displayFrameId"] = .string(frame); other["refWidth"] = 1000
        let stale = try r.act(.object(other))
        #expect(stale["error"]?["code"] == "COMPUTER_STALE_FRAME" && stale["error"]?["message"]?.stringValue?.hasSuffix("take a new screenshot") == true, "\(stale)")
        var outside = click; outside["displayFrameId"] = .string(frame); outside["x"] = 1280
        #expect(try code(.object(outside)) == "INVALID_REQUEST", "x = delivered width is outside the image")
        var busy = click; busy["displayFrameId"] = .string(frame); busy["executionId"] = "22222222-2222-4222-8222-222222222222"
        #expect(try code(.object(busy)) == "COMPUTER_HOST_BUSY", "another execution owns the desktop")
        #expect(try r.act(["action": "__close_execution", "executionId": .string(Self.exec), "reason": "done"])["payload"] == ["ok": true])
        #expect(try r.act(.object(busy))["payload"] == ["ok": true], "free again after the close")
        // The display's geometry changes after the screenshot (monitors appear: screenIndex 0 is now
        // a 960-wide monitor): the old frame is refused. (Xvfb refuses RRSetScreenSize for its one
        // fixed mode, so a monitor change stands in for a resolution change; the check is the same.)
        let painter = try XPainter(r.x.display)
        painter.setMonitor("A", x: 0, y: 0, width: 960, height: 1080)
        painter.setMonitor("B", x: 960, y: 0, width: 960, height: 1080)
        let changed = try r.act(.object(busy))
        #expect(changed["error"]?["code"] == "COMPUTER_STALE_FRAME", "\(changed)")
        #expect(try code(["action": "list_apps"]) == "COMPUTER_UNSUPPORTED_ACTION")
        #expect(try code(["action": "key", "executionId": "22222222-2222-4222-8222-222222222222", "keys": "ctrl+nosuchkey"]) == "COMPUTER_UNSUPPORTED_KEY")
        #expect(try code(["action": "scroll", "scrollAmount": 101]) == "INVALID_REQUEST")
        // Nobody at the device: refused like the screen.
        let bg = try r.node.cli(["presence", "background"])
        #expect(bg.code == 0, "\(bg.stderr)")
        #expect(try code(["action": "key", "executionId": "22222222-2222-4222-8222-222222222222", "keys": "a"]) == "NODE_BACKGROUND_UNAVAILABLE")
        #expect(r.gw.schemaErrors.isEmpty, "\(r.gw.schemaErrors)")
    }

    @Test func secondMonitorUsesItsOwnOriginAndScale() throws {
        let r = try Rig(screen: "2560x1024x24", monitors: [("LEFT", 0, 0, 1280, 1024), ("RIGHT", 1280, 0, 1280, 1024)])
        defer { r.stop() }
        let shot = try r.snapshot(screenIndex: 1)
        let frame = try #require(shot["displayFrameId"]?.stringValue)
        #expect(shot["width"] == 1280 && shot["height"] == 1024, "a 1280-wide monitor is delivered unscaled")
        _ = try r.act(["action": "left_click", "executionId": .string(Self.exec), "x": 100, "y": 200, "displayFrameId": .string(frame),
                       "refWidth": 1280, "screenIndex": 1])
        let p = r.recorded("ButtonPress")
        #expect(p.count == 1 && p.first?.x == 1380 && p.first?.y == 200, "\(p.map { "\($0.x),\($0.y)" })")
        // The frame of monitor 1 is not valid for monitor 0.
        let wrong = try r.act(["action": "left_click", "executionId": .string(Self.exec), "x": 100, "y": 200, "displayFrameId": .string(frame),
                               "refWidth": 1280, "screenIndex": 0])
        #expect(wrong["error"]?["code"] == "COMPUTER_STALE_FRAME")
    }
}

/// Text typed by computer.act arrives verbatim in a real text field: Chromium (the canvas bundle's
/// kiosk window) on Xvfb, read back with canvas.eval.
@Suite(.serialized, .enabled(if: CanvasNode.windowBrowserInstalled, "needs chromium (scripts/setup installs it)"))
struct ComputerTypingIntoChromiumTests {
    @Test func typedTextArrivesVerbatimInATextField() throws {
        let x = try Xvfb(screens: ["1280x800x24"]); defer { x.stop() }
        let gw = try TestGateway(stateFile: TestPaths.tempDir("gw") + "/gw.json", args: ["--auto-approve"]); defer { gw.stop() }
        let node = NodeUnderTest(gatewayURL: gw.url, extra: "capabilities: { canvas: { window: true, display: '\(x.display)' }, " +
                                 "computer: { enabled: true, display: '\(x.display)' }, screen: { display: '\(x.display)' }, camera: { enabled: false } }")
        defer { node.cleanup() }
        try node.start()
        _ = try #require(gw.waitFor("hello"), "\(node.log)")
        func invoke(_ command: String, _ params: JSONValue) -> JSONValue? { gw.invoke(command, paramsJSON: params.jsonString(), timeoutMs: 30_000, wait: 40) }
        let field = "document.body.innerHTML = '<textarea id=t style=\"position:fixed;inset:0;width:100%;height:100%;font-size:32px\"></textarea>'; " +
                    "document.getElementById('t').focus(); 'ready'"
        let ready = invoke("canvas.eval", ["javaScript": .string(field)])
        #expect(ready?["payload"]?["result"] == "ready", "\(String(describing: ready))\n\(node.log.suffix(1500))")
        let shot = try #require(invoke("screen.snapshot", ["maxWidth": 1280, "format": "jpeg", "quality": 0.85])?["payload"])
        let frame = try #require(shot["displayFrameId"]?.stringValue, "\(shot)")
        let exec: JSONValue = "33333333-3333-4333-8333-333333333333"
        let click = invoke("computer.act", ["action": "left_click", "executionId": exec, "x": 640, "y": 400, "displayFrameId": .string(frame), "refWidth": 1280])
        #expect(click?["payload"] == ["ok": true], "\(String(describing: click))")
        let text = "Hello, wörld 123 !@#$%^&*()_+-=[]{};':\",./<>?`~ й€ ✓"
        let typed = invoke("computer.act", ["action": "type", "executionId": exec, "text": .string(text)])
        #expect(typed?["payload"] == ["ok": true], "\(String(describing: typed))")
        var value: String?
        _ = waitUntil(timeout: 5) {
            value = invoke("canvas.eval", ["javaScript": "document.getElementById('t').value"])?["payload"]?["result"]?.stringValue
            return value == text
        }
        #expect(value == text, "typed \(text.debugDescription), the field has \(String(describing: value).debugDescription)")
        // Keys: select all and delete empties the field.
        _ = invoke("computer.act", ["action": "key", "executionId": exec, "keys": "ctrl+a"])
        _ = invoke("computer.act", ["action": "key", "executionId": exec, "keys": "BackSpace"])
        #expect(waitUntil(timeout: 5) { invoke("canvas.eval", ["javaScript": "document.getElementById('t').value"])?["payload"]?["result"] == "" })
    }
}
