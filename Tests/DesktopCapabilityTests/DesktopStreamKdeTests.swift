import Foundation
@testable import Support
@testable import TestSupport
import Testing

/// desktop.stream of KDE Plasma (kwin_wayland 5.27, virtual backend) through the node's own RFB
/// server: frames are KWin screenshots (KWin sends a headless session's screen casts no frames),
/// input goes to KWin's fake input, both granted by the package's desktop entry. The operator's
/// viewer is vncdotool behind the test gateway.
@Suite(.serialized, .enabled(if: KWinSession.available, "needs root, kwin-wayland and GTK 4 (scripts/setup installs them)"))
struct DesktopStreamKdeTests {
    @Test func theOperatorSeesKdeAndClicksAGTKWindow() throws {
        let kwin = try KWinSession(width: 800, height: 600, rgb: "#204080"); defer { kwin.stop() }
        let env = kwin.environment.filter { ["DBUS_SESSION_BUS_ADDRESS", "XDG_RUNTIME_DIR", "WAYLAND_DISPLAY"].contains($0.key) }
        let rig = try DesktopRig(desktop: "", env: env); defer { rig.stop() }
        let port = try rig.startStream("kde-1")
        #expect(rig.gw.waitFor("desktop_auth", timeout: 30) { $0["id"] == "kde-1" }?["ok"] == true, "\(rig.node.log.suffix(2000))")
        let seen = try rig.view(port, pixels: [(10, 10), (790, 590)], click: (200, 100))
        let story = "viewer: \(seen)\n\(rig.brokerEvents)\n\(rig.node.log.suffix(2500))"
        #expect(seen["size"] == [800, 600], "\(story)")
        for p in ["10,10", "790,590"] { #expect(seen["pixels"]?[p] == [0x20, 0x40, 0x80], "\(p): \(story)") }
        #expect(waitUntil(timeout: 5) { kwin.logged.contains("CLICK 1 200 100") }, "\(kwin.logged.suffix(10))\n\(story)")
        let result = try #require(rig.result("kde-1"), "\(story)")
        #expect(result["payload"] == ["status": "closed"], "\(result)")
        #expect(rig.node.log.contains("started kde (pid"), "\(rig.node.log.suffix(1500))")
        let doctor = try rig.node.cli(["doctor"])
        #expect(doctor.stdout.contains("[ok  ] desktop: desktop.stream would start the node's own RFB server for KDE Plasma"), "\(doctor.stdout)")
    }
}
