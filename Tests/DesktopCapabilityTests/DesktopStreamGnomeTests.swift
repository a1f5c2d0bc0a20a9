import Foundation
@testable import Support
@testable import TestSupport
import Testing

/// desktop.stream of a real GNOME (gnome-shell 43 headless) through the node's own RFB server:
/// frames from a Mutter screen cast, input into a Mutter RemoteDesktop session, on one end of a
/// socketpair inside the node. The operator's viewer is vncdotool behind the test gateway, which
/// answers the VNC password challenge the node runs.
@Suite(.serialized, .enabled(if: GnomeShell.available, "needs root, gnome-shell, PipeWire and GTK 4 (scripts/setup installs them)"))
struct DesktopStreamGnomeTests {
    @Test func theOperatorSeesGnomeAndClicksAGTKWindow() throws {
        let gnome = try GnomeShell(monitors: [(800, 600, "#204080")]); defer { gnome.stop() }
        let rig = try DesktopRig(desktop: "", env: ["DBUS_SESSION_BUS_ADDRESS": gnome.sessionBus, "XDG_RUNTIME_DIR": gnome.runtimeDir,
                                                    "WAYLAND_DISPLAY": "wayland-0"]); defer { rig.stop() }
        let port = try rig.startStream("gn-1")
        #expect(rig.gw.waitFor("desktop_auth", timeout: 30) { $0["id"] == "gn-1" }?["ok"] == true, "\(rig.node.log.suffix(2000))")
        // Nothing of this node listens: its server is one end of a socketpair. (Only this node's
        // paths count: an x11vnc of an earlier test may still be on its way out.)
        let listening = try runProcess("/usr/bin/ss", ["-H", "-lxp"])
        let ours = listening.stdout.split(separator: "\n").filter { $0.contains(rig.node.dir) && !$0.contains("control.sock") }
        #expect(ours.isEmpty, "\(listening.stdout)")
        let seen = try rig.view(port, pixels: [(10, 10), (790, 590), (400, 300)], click: (400, 300))
        let story = "viewer: \(seen)\n\(rig.brokerEvents)\n\(rig.node.log.suffix(2500))"
        #expect(seen["size"] == [800, 600], "\(story)")
        for p in ["10,10", "790,590"] { #expect(seen["pixels"]?[p] == [0x20, 0x40, 0x80], "\(p): \(story)") }
        #expect(waitUntil(timeout: 5) { gnome.logged("Meta-0").contains("CLICK 1 400 300") }, "\(gnome.logged("Meta-0").suffix(10))\n\(story)")
        let result = try #require(rig.result("gn-1"), "\(story)")
        #expect(result["payload"] == ["status": "closed"], "\(result)")
        let auth = try #require(rig.gw.all("desktop_auth").first { $0["id"] == "gn-1" })
        #expect(auth["offered"] == [2], "the node offered VNC authentication: \(auth)")
        #expect(rig.node.log.contains("started gnome (pid"), "\(rig.node.log.suffix(1500))")
        #expect(rig.streamDirectories.isEmpty)
        let doctor = try rig.node.cli(["doctor"])
        #expect(doctor.stdout.contains("[ok  ] desktop: desktop.stream would start the node's own RFB server for GNOME"), "\(doctor.stdout)")
    }
}
