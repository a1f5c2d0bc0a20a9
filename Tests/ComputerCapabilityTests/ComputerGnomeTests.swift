@testable import Config
import DesktopSession
import Foundation
@testable import Kit
@testable import Support
@testable import TestSupport
import Testing

/// computer.act on a real GNOME (gnome-shell 43 headless, two virtual monitors) through Mutter's
/// RemoteDesktop API, with the real binary and the test gateway. A GTK 4 probe window fullscreen
/// on each monitor logs the clicks, keys, text and scrolls it receives.
@Suite(.serialized, .enabled(if: GnomeShell.available, "needs root, gnome-shell, PipeWire and GTK 4 (scripts/setup installs them)"))
struct ComputerGnomeTests {
    @Test func clicksTypingKeysAndScrollingReachAGTKWindowOnEachMonitor() throws {
        let gnome = try GnomeShell(monitors: [(800, 600, "#808080"), (640, 480, "#406080")])
        defer { gnome.stop() }
        let rig = try ComputerRig(computer: "backend: 'gnome'", screen: "backend: 'gnome'",
                                  env: ["DBUS_SESSION_BUS_ADDRESS": gnome.sessionBus, "XDG_RUNTIME_DIR": gnome.runtimeDir],
                                  exec: "33333333-3333-4333-8333-333333333333")
        defer { rig.stop() }
        let exec = rig.exec
        let call = rig.call, act = rig.act
        // screenIndex 0 is the leftmost monitor: Mutter puts its primary (the larger) there.
        let order = try gnome.connectorsByPosition()
        #expect(order == ["Meta-0", "Meta-1"], "\(order)")
        let left = order[0], right = order[1]
        func logged(_ m: String, _ line: String) -> Bool { waitUntil(timeout: 5) { gnome.logged(m).contains(line) } }

        // A screenshot scaled to 400 wide: (50, 25) there is (100, 50) on the 800x600 monitor.
        let half = try rig.frame(0, width: 400)
        try act(["action": "left_click", "x": 50, "y": 25, "displayFrameId": .string(half), "refWidth": 400])
        #expect(logged(left, "CLICK 1 100 50") && logged(left, "RELEASE 1 100 50"), "\(gnome.logged(left).suffix(20))")
        let f0 = try rig.frame(0, width: 800)
        try act(["action": "right_click", "x": 300, "y": 200, "displayFrameId": .string(f0), "refWidth": 800])
        #expect(logged(left, "CLICK 3 300 200"), "\(gnome.logged(left).suffix(20))")
        // ASCII through keysyms; é, € and ж are outside a US layout: through GNOME's clipboard.
        try act(["action": "type", "text": "hi é€ж!"])
        #expect(logged(left, "TEXT hi é€ж!"), "\(gnome.logged(left).suffix(20))")
        try act(["action": "key", "keys": "ctrl+a"])
        #expect(logged(left, "KEY 65507 Control_L") && logged(left, "KEY 97 a"), "\(gnome.logged(left).suffix(20))")
        try act(["action": "scroll", "x": 320, "y": 240, "scrollDirection": "down", "scrollAmount": 2, "displayFrameId": .string(f0), "refWidth": 800])
        #expect(logged(left, "SCROLL 0 1"), "\(gnome.logged(left).suffix(20))")

        // The second monitor: its own pixels, its own window.
        let f1 = try rig.frame(1, width: 640)
        try act(["action": "left_click", "screenIndex": 1, "x": 600, "y": 400, "displayFrameId": .string(f1), "refWidth": 640])
        #expect(logged(right, "CLICK 1 600 400"), "\(gnome.logged(right).suffix(20))")
        // A frame id of the other monitor is refused for this one.
        let r = try call("computer.act", ["executionId": .string(exec), "action": "left_click", "screenIndex": 1, "x": 10, "y": 10,
                                          "displayFrameId": .string(f0), "refWidth": 800])
        #expect(r["ok"] == false, "\(r)")
        try act(["action": "__close_execution"])
        #expect(rig.gw.schemaErrors.isEmpty)
    }
}

/// presence.mode gnome: GNOME's idle monitor, with the node's own injected input not counted.
@Suite(.serialized, .enabled(if: GnomeShell.available, "needs root, gnome-shell, PipeWire and GTK 4 (scripts/setup installs them)"))
struct GnomePresenceTests {
    @Test func aPersonsInputIsForegroundTheNodesOwnIsNot() async throws {
        let gnome = try GnomeShell(monitors: [(640, 480, "#000000")])
        defer { gnome.stop() }
        var config = NodeConfig.Presence()
        config.idleSeconds = 2
        let source = GnomePresenceSource(config: config, environment: ["DBUS_SESSION_BUS_ADDRESS": gnome.sessionBus])
        func person() throws {
            let r = try runProcess("/usr/bin/python3", [TestPaths.repoRoot + "/Tests/gnome/person_types.py"], env: gnome.environment)
            #expect(r.code == 0, "\(r.stdout)\(r.stderr)")
        }
        let bus = try SessionBus(address: gnome.sessionBus)
        try person()
        let active = await source.sample()
        #expect(active.presence == .foreground, "\(active.reason)")
        // GNOME's idle monitor says when nobody has typed for 2 s (a watch fired on the bus, not
        // a clock in the test); then presence is background.
        let fired = try bus.subscribe(path: "/org/gnome/Mutter/IdleMonitor/Core", interface: GnomePresenceSource.service, member: "WatchFired")
        _ = try bus.call(GnomePresenceSource.service, "/org/gnome/Mutter/IdleMonitor/Core", GnomePresenceSource.service, "AddIdleWatch", [.uint64(2100)])
        _ = try bus.next(fired, timeout: .seconds(10))
        let idle = await source.sample()
        #expect(idle.presence == .background, "\(idle.reason)")
        // The node's own input (what computer.act sends) keeps GNOME awake but is not a person.
        let input = try MutterRemoteDesktop(bus: bus, monitors: try MutterDisplays.monitors(bus))
        try input.keysym(0xFFE1, down: true)
        try input.keysym(0xFFE1, down: false)
        let afterOwn = await source.sample()
        #expect(afterOwn.presence == .background, "\(afterOwn.reason)")
        // person_types.py returns once GNOME's idle monitor has the person's key.
        try person()
        let back = await source.sample()
        #expect(back.presence == .foreground, "\(back.reason)")

        // The binary's own path: presence.mode gnome loads libopenclaw-session.so; doctor says
        // what it sees.
        let dir = TestPaths.tempDir("gnome-doctor")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try ("{ node: { stateDir: '\(dir)/state' }, presence: { mode: 'gnome', idleSeconds: 60 }, " +
             "capabilities: { computer: { enabled: true }, screen: { enabled: true } } }").write(toFile: dir + "/c.json5", atomically: false, encoding: .utf8)
        // The session as a user service sees it, plus GNOME's Wayland socket (which offers no
        // screencopy) and an X display that is not there.
        let doctor = try runProcess(TestPaths.nodeBinary, ["doctor", "--config", dir + "/c.json5"],
                                    env: ["HOME": dir, "DBUS_SESSION_BUS_ADDRESS": gnome.sessionBus, "XDG_RUNTIME_DIR": gnome.runtimeDir,
                                          "WAYLAND_DISPLAY": "wayland-0", "DISPLAY": ":1999", "PATH": "/usr/bin:/bin"])
        #expect(doctor.stdout.contains("[ok  ] presence: mode gnome: foreground (keyboard or mouse input in GNOME"), "\(doctor.stdout)")
        #expect(doctor.stdout.contains("[ok  ] screen: backend auto: captures through GNOME's Mutter screen cast over PipeWire (Meta-0 640x480)" +
                                       "; not used: the Wayland compositor at wayland-0 offers no wlr-screencopy"), "\(doctor.stdout)")
        #expect(!doctor.stdout.contains("Wayland compositor lacks"), "\(doctor.stdout)")
        #expect(doctor.stdout.contains("[ok  ] computer: backend auto: input through GNOME's Mutter RemoteDesktop"), "\(doctor.stdout)")
        // caps says the same, also for a user unit started before the session (no WAYLAND_DISPLAY:
        // GNOME's socket is found in XDG_RUNTIME_DIR, and passed over for lacking screencopy).
        let caps = try runProcess(TestPaths.nodeBinary, ["caps", "--config", dir + "/c.json5"],
                                  env: ["HOME": dir, "DBUS_SESSION_BUS_ADDRESS": gnome.sessionBus, "XDG_RUNTIME_DIR": gnome.runtimeDir,
                                        "PATH": "/usr/bin:/bin"])
        #expect(caps.stdout.contains("  screen: backend auto: captures through GNOME's Mutter screen cast over PipeWire (Meta-0 640x480)" +
                                     "; not used: the Wayland compositor at wayland-0 offers no wlr-screencopy"), "\(caps.stdout)")
        #expect(caps.stdout.contains("  computer: backend auto: input through GNOME's Mutter RemoteDesktop"), "\(caps.stdout)")
    }
}

/// computer.act on KDE Plasma (kwin_wayland 5.27, virtual backend) through KWin's fake input,
/// which KWin offers the node's binary through the desktop entry grant, with the real binary and
/// the test gateway; the GTK 4 probe window logs what arrives.
@Suite(.serialized, .enabled(if: KWinSession.available, "needs root, kwin-wayland and GTK 4 (scripts/setup installs them)"))
struct ComputerKdeTests {
    @Test func clicksKeysAndScrollingReachAGTKWindowOnKWin() throws {
        let kwin = try KWinSession(width: 800, height: 600, rgb: "#808080")
        defer { kwin.stop() }
        let rig = try ComputerRig(env: kwin.environment.filter { ["DBUS_SESSION_BUS_ADDRESS", "XDG_RUNTIME_DIR", "WAYLAND_DISPLAY"].contains($0.key) },
                                  exec: "44444444-4444-4444-8444-444444444444")
        defer { rig.stop() }
        let act = rig.act
        let frame = try rig.frame(width: 800)
        func logged(_ line: String) -> Bool { waitUntil(timeout: 5) { kwin.logged.contains(line) } }
        try act(["action": "left_click", "x": 100, "y": 50, "displayFrameId": .string(frame), "refWidth": 800])
        #expect(logged("CLICK 1 100 50") && logged("RELEASE 1 100 50"), "\(kwin.logged.suffix(20))")
        try act(["action": "right_click", "x": 300, "y": 200, "displayFrameId": .string(frame), "refWidth": 800])
        #expect(logged("CLICK 3 300 200"), "\(kwin.logged.suffix(20))")
        try act(["action": "type", "text": "Hi, KDE!"])
        #expect(logged("TEXT Hi, KDE!"), "\(kwin.logged.suffix(20))")
        // What a US layout cannot type is pasted through the clipboard (data control), in order
        // with the keys around it.
        try act(["action": "type", "text": " Ça va? €ж!"])
        #expect(logged("TEXT Hi, KDE! Ça va? €ж!"), "\(kwin.logged.suffix(20))")
        try act(["action": "key", "keys": "ctrl+a"])
        #expect(logged("KEY 65507 Control_L") && logged("KEY 97 a"), "\(kwin.logged.suffix(20))")
        try act(["action": "scroll", "x": 400, "y": 300, "scrollDirection": "down", "scrollAmount": 1, "displayFrameId": .string(frame), "refWidth": 800])
        #expect(waitUntil(timeout: 5) { kwin.logged.contains { $0.hasPrefix("SCROLL 0 ") } }, "\(kwin.logged.suffix(20))")
        try act(["action": "__close_execution"])
        let doctor = try rig.node.cli(["doctor"])
        #expect(doctor.stdout.contains("[ok  ] computer: backend auto: input through KWin's fake input"), "\(doctor.stdout)")
    }
}
