@testable import Config
import CX11
import Foundation
@testable import HostPresence
@testable import Kit
import Media
@testable import NodeCLI
@testable import Registry
@testable import Store
@testable import Support
@testable import TestSupport
import Testing

/// Window mode: full Chromium as a kiosk window on a real X server (Xvfb); the X screen itself
/// (captured by the node's screen bundle) shows the canvas.
@Suite(.serialized, .enabled(if: CanvasNode.windowBrowserInstalled, "needs chromium (scripts/setup installs it)"))
struct CanvasWindowTests {
    /// The X screen as the node's own screen bundle captures it (enabled beside the canvas), through
    /// the gateway like any agent's screen.snapshot.
    static func screen(_ c: CanvasNode) throws -> DecodedImage {
        let r = c.invoke("screen.snapshot", #"{"format":"png","maxWidth":4000}"#)
        guard r.ok, let payload = r.payload else { throw TestFailure("screen.snapshot failed: \(String(describing: r.error))") }
        return try ImageChecks.image(payload)
    }

    static func isColour(_ img: DecodedImage, _ fx: Double, _ fy: Double, _ rgb: UInt32) -> Bool {
        ImageChecks.near(img.pixel(x: Int(Double(img.width) * fx), y: Int(Double(img.height) * fy)), rgb, tolerance: 12)
    }

    static func waitForScreen(_ c: CanvasNode, _ ok: (DecodedImage) -> Bool) async throws -> Bool {
        let deadline = Date() + 30  // a busy machine's Chromium can take a while to show a page
        while Date() < deadline {
            if ok(try screen(c)) { return true }
            try await Task.sleep(for: .milliseconds(200))
        }
        return false
    }

    @Test func kioskWindowShowsTheCanvasOnTheDisplay() async throws {
        let x = try Xvfb(screens: ["1024x768x24"]); defer { x.stop() }
        let host = try CanvasHostServer(); defer { host.stop() }
        // A stand-in logind: a kiosk's screen must not blank while the canvas is shown.
        let bus = try PrivateBus(); defer { bus.stop() }
        let logind = try PythonServer(script: "fake_logind.py", args: [bus.address]); defer { logind.stop() }
        let c = try CanvasNode(canvas: "window: true, display: '\(x.display)'",
                               otherCapabilities: "screen: { display: '\(x.display)' }", env: ["DBUS_SYSTEM_BUS_ADDRESS": bus.address]); defer { c.stop() }
        // Up from the daemon's start, before any command: the scaffold's dark background fills the screen.
        #expect(try await Self.waitForScreen(c) { Self.isColour($0, 0.8, 0.8, 0x0d1117) }, "\(c.node.log.suffix(1500))")
        #expect(c.invoke("canvas.present", #"{"url":"\#(host.base)/__openclaw__/canvas/colors.html"}"#).ok, "\(c.node.log.suffix(2000))")
        // Fullscreen: the four colours fill the X screen.
        var img = try Self.screen(c)
        let deadline = Date() + 10
        while !Self.isColour(img, 0.75, 0.75, 0xffffff) || !Self.isColour(img, 0.25, 0.25, 0xff0000), Date() < deadline {
            try await Task.sleep(for: .milliseconds(200))
            img = try Self.screen(c)
        }
        for (fx, fy, rgb) in [(0.25, 0.25, 0xff0000), (0.75, 0.25, 0x00ff00), (0.25, 0.75, 0x0000ff), (0.75, 0.75, 0xffffff)] as [(Double, Double, UInt32)] {
            #expect(Self.isColour(img, fx, fy, rgb), "\(fx),\(fy): \(ImageChecks.hex(img.pixel(x: Int(Double(img.width) * fx), y: Int(Double(img.height) * fy))))")
        }
        // canvas.snapshot in window mode captures the page too.
        let snap = try c.snapshot(#"{"format":"png"}"#)
        #expect(Self.isColour(snap, 0.75, 0.25, 0x00ff00))
        // (Chromium takes locks of its own, "Saving browser state": only the node's count here.)
        func next(where wanted: (JSONValue) -> Bool) -> JSONValue? {
            while let line = logind.nextLine(timeout: 10) { if let v = JSONValue.parse(line), wanted(v) { return v } }
            return nil
        }
        let held = try #require(next { $0["inhibit"]?["who"] == "openclaw-node" }, "\(c.node.log.suffix(1500))")
        #expect(held["inhibit"]?["why"] == "canvas window shown", "\(held)")
        // The X screensaver (1 s without input) does not come on while the canvas is shown.
        let saver = try #require(ScreenSaverProbe(x.display))
        saver.setTimeout(1)
        // Until the server itself counts 2 s without input: an unsuspended saver is on by then.
        #expect(waitUntil(timeout: 15) { saver.idleMilliseconds >= 2000 }, "the X server never went idle")
        #expect(!saver.isOn, "the screensaver blanked the kiosk")
        // Hidden: the window is gone from the screen (Xvfb's root window is black), the lock ends.
        #expect(c.invoke("canvas.hide").ok, "\(c.node.log.suffix(1000))")
        #expect(next { $0["released"] == held["inhibit"]?["id"] } != nil, "the lock outlived the window")
        // Hidden, the screensaver works again; then off, for the rest of the test's screens.
        #expect(waitUntil(timeout: 5) { saver.isOn }, "the screensaver stayed suspended after canvas.hide")
        saver.setTimeout(0)
        saver.reset()
        #expect(try await Self.waitForScreen(c) { Self.isColour($0, 0.75, 0.75, 0x000000) && Self.isColour($0, 0.25, 0.25, 0x000000) })
        // Shown again at a placement: the page fills 400x300 at the top left, the rest is root window.
        #expect(c.invoke("canvas.present", #"{"placement":{"x":0,"y":0,"width":400,"height":300}}"#).ok, "\(c.node.log.suffix(1000))")
        #expect(try await Self.waitForScreen(c) { img in
            ImageChecks.near(img.pixel(x: 100, y: 200), 0x0000ff, tolerance: 12) && Self.isColour(img, 0.75, 0.75, 0x000000)
        }, "\(c.node.log.suffix(1000))")
        // Killed, the kiosk window comes back by itself (no command needed) with its page.
        for pid in c.browserPids { kill(pid, SIGKILL) }
        #expect(waitUntil(timeout: 10) { c.node.log.contains("starting a new one") }, "\(c.node.log.suffix(1500))")
        #expect(try await Self.waitForScreen(c) { img in
            ImageChecks.near(img.pixel(x: 100, y: 200), 0x0000ff, tolerance: 12) || Self.isColour(img, 0.25, 0.75, 0x0000ff)
        }, "\(c.node.log.suffix(1500))")
        // Stopping the node leaves nothing in /tmp: Chromium's singleton folder goes with the browser.
        let singleton = try? FileManager.default.destinationOfSymbolicLink(atPath: c.node.dir + "/state/canvas/browser/SingletonSocket")
        #expect(c.node.stop() == 0)
        if let singleton {
            #expect(!FileManager.default.fileExists(atPath: (singleton as NSString).deletingLastPathComponent), "\(singleton) left behind")
        }
    }
}

/// The test's own X client for the screensaver: its timeout and whether it is on now.
final class ScreenSaverProbe {
    private let display: OpaquePointer
    init?(_ name: String) {
        guard let d = XOpenDisplay(name) else { return nil }
        display = d
    }
    deinit { XCloseDisplay(display) }
    func setTimeout(_ seconds: Int32) {
        XSetScreenSaver(display, seconds, 0, 0 /* DontPreferBlanking */, 1 /* AllowExposures */)
        XSync(display, 0)
    }
    func reset() { XResetScreenSaver(display); XSync(display, 0) }
    var isOn: Bool { query()?.state == ScreenSaverOn }
    /// How long the server has seen no input, by its own count.
    var idleMilliseconds: UInt { query()?.idle ?? 0 }
    private func query() -> XScreenSaverInfo? {
        guard let info = XScreenSaverAllocInfo() else { return nil }
        defer { XFree(info) }
        guard XScreenSaverQueryInfo(display, cx11_default_root_window(display), info) != 0 else { return nil }
        return info.pointee
    }
}
