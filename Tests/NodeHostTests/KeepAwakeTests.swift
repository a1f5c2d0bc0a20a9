@testable import Config
import Foundation
@testable import HostPresence
import Kit
@testable import Support
@testable import TestSupport
import Testing

/// Keep-awake against logind's D-Bus API on a private system bus (a stand-in logind that records
/// each Inhibit call and when the lock's descriptor is closed): presence.keepAwake holds the lock
/// for as long as the daemon runs and `status` says so; holds are counted, so the lock is taken
/// once and ended with the last release; a daemon without logind says why in status and runs on.
@Suite(.serialized) struct KeepAwakeTests {
    struct Logind {
        let bus: PrivateBus
        let server: PythonServer
        init() throws {
            bus = try PrivateBus()
            do { server = try PythonServer(script: "fake_logind.py", args: [bus.address]) } catch { bus.stop(); throw error }
        }
        /// The next line the stand-in printed that has `key`.
        func next(_ key: String, timeout: TimeInterval = 10) -> JSONValue? { server.next(withKey: key, timeout: timeout) }
        func stop() { server.stop(); bus.stop() }
    }

    @Test func presenceKeepAwakeHoldsTheLockWhileTheDaemonRuns() throws {
        let logind = try Logind(); defer { logind.stop() }
        let n = NodeUnderTest(gatewayURL: "ws://127.0.0.1:9", extra: "presence: { mode: 'manual', keepAwake: true }")
        defer { n.cleanup() }
        n.extraEnv = ["DBUS_SYSTEM_BUS_ADDRESS": logind.bus.address]
        try n.start()
        let call = try #require(logind.next("inhibit"), "\(n.log)")
        #expect(call["inhibit"]?["what"] == "idle:sleep" && call["inhibit"]?["mode"] == "block", "\(call)")
        #expect(call["inhibit"]?["who"] == "openclaw-node" && call["inhibit"]?["why"] == "presence.keepAwake", "\(call)")
        #expect(waitUntil(timeout: 10) { (try? n.cli(["status"]).stdout.contains("Keep awake:   held: logind's idle and sleep lock (presence.keepAwake)")) == true },
                "\((try? n.cli(["status"]).stdout) ?? "")")
        // Still held a moment later: the node keeps the descriptor, not just the call.
        #expect(logind.next("released", timeout: 1.5) == nil)
        #expect(n.stop() == 0)
        let released = try #require(logind.next("released"), "the lock outlived the daemon")
        #expect(released["released"] == call["inhibit"]?["id"])
    }

    @Test func holdsAreCountedAndTheLockEndsWithTheLast() throws {
        let logind = try Logind(); defer { logind.stop() }
        let previous = getenv("DBUS_SYSTEM_BUS_ADDRESS").map { String(cString: $0) }
        setenv("DBUS_SYSTEM_BUS_ADDRESS", logind.bus.address, 1)
        defer { if let previous { setenv("DBUS_SYSTEM_BUS_ADDRESS", previous, 1) } else { unsetenv("DBUS_SYSTEM_BUS_ADDRESS") } }
        let keeper = KeepAwakeKeeper()
        let canvas = keeper.hold("canvas window shown")
        let call = try #require(logind.next("inhibit"))
        #expect(call["inhibit"]?["why"] == "canvas window shown")
        let talk = keeper.hold("talk conversation")
        #expect(waitUntil(timeout: 5) { keeper.status.reasons == ["canvas window shown", "talk conversation"] && keeper.status.held })
        canvas.release()
        canvas.release()  // a second release does nothing
        #expect(logind.next("released", timeout: 1.5) == nil, "ended while a hold remained")
        #expect(logind.next("inhibit", timeout: 0.5) == nil, "taken twice")
        talk.release()
        #expect(try #require(logind.next("released"))["released"] == call["inhibit"]?["id"])
        #expect(waitUntil(timeout: 5) { !keeper.status.held && keeper.status.reasons.isEmpty })
        // A hold dropped without a release ends with its object.
        var dropped: KeepAwakeHold? = keeper.hold("dropped")
        _ = try #require(logind.next("inhibit"))
        #expect(dropped != nil)
        dropped = nil
        _ = try #require(logind.next("released"))
    }

    /// A desktop session: a private session bus with the real xdg-desktop-portal and its GTK
    /// backend (on an Xvfb), which hands an idle inhibition to the session's
    /// org.freedesktop.ScreenSaver — here a stand-in that records Inhibit and UnInhibit, as KDE's
    /// session would get them. The portal's inhibitor is taken with logind's lock, ended with the
    /// last hold (Request.Close), and goes with a daemon that stops.
    @Test(.enabled(if: ["/usr/libexec/xdg-desktop-portal", "/usr/libexec/xdg-desktop-portal-gtk"].allSatisfy { FileManager.default.isExecutableFile(atPath: $0) },
                   "needs xdg-desktop-portal and xdg-desktop-portal-gtk (scripts/setup installs them)"))
    func inADesktopSessionThePortalsIdleInhibitorIsHeldToo() throws {
        let logind = try Logind(); defer { logind.stop() }
        let session = try PrivateBus(); defer { session.stop() }
        let screensaver = try PythonServer(script: "fake_screensaver.py", args: [session.address]); defer { screensaver.stop() }
        let x = try Xvfb(screens: ["320x240x24"]); defer { x.stop() }
        let home = TestPaths.tempDir("portal-home"); defer { try? FileManager.default.removeItem(atPath: home) }
        let env = ["DBUS_SESSION_BUS_ADDRESS": session.address, "DISPLAY": x.display, "XDG_CURRENT_DESKTOP": "GNOME",
                   "HOME": home, "PATH": "/usr/bin:/bin", "GTK_A11Y": "none", "NO_AT_BRIDGE": "1"]
        let backend = try BackgroundProcess("/usr/libexec/xdg-desktop-portal-gtk", [], env: env); defer { backend.stop() }
        let portal = try BackgroundProcess("/usr/libexec/xdg-desktop-portal", [], env: env); defer { portal.stop() }
        #expect(waitUntil(timeout: 20) {
            let names = (try? runProcess("/usr/bin/busctl", ["--address=" + session.address, "list", "--no-pager"], timeout: 5).stdout) ?? ""
            return names.contains("org.freedesktop.portal.Desktop") && names.contains("org.freedesktop.impl.portal.desktop.gtk")
        }, "portal: \(portal.log)\nbackend: \(backend.log)")
        func next(_ key: String, timeout: TimeInterval = 10) -> JSONValue? { screensaver.next(withKey: key, timeout: timeout) }

        // In this process: a hold takes both, its release ends both (the portal's by Request.Close).
        let saved: [(String, String?)] = ["DBUS_SYSTEM_BUS_ADDRESS", "DBUS_SESSION_BUS_ADDRESS"].map { (name: String) in
            (name, getenv(name).map { String(cString: $0) })
        }
        setenv("DBUS_SYSTEM_BUS_ADDRESS", logind.bus.address, 1)
        setenv("DBUS_SESSION_BUS_ADDRESS", session.address, 1)
        defer { for (k, v) in saved { if let v { setenv(k, v, 1) } else { unsetenv(k) } } }
        let keeper = KeepAwakeKeeper()
        let hold = keeper.hold("canvas window shown")
        let inhibit = try #require(next("inhibit"), "portal: \(portal.log)\nbackend: \(backend.log)")
        #expect(inhibit["inhibit"]?["reason"] == "canvas window shown", "\(inhibit)")
        _ = try #require(logind.next("inhibit"), "logind's lock is taken beside it")
        #expect(waitUntil(timeout: 5) { keeper.holdsDesktopInhibitor })
        #expect(next("uninhibit", timeout: 1.5) == nil, "still held")
        hold.release()
        #expect(try #require(next("uninhibit"))["uninhibit"] == inhibit["inhibit"]?["cookie"])
        #expect(waitUntil(timeout: 5) { !keeper.holdsDesktopInhibitor })

        // The daemon: presence.keepAwake holds it while it runs; status says so; it ends with the daemon.
        let n = NodeUnderTest(gatewayURL: "ws://127.0.0.1:9", extra: "presence: { mode: 'manual', keepAwake: true }")
        defer { n.cleanup() }
        n.extraEnv = ["DBUS_SYSTEM_BUS_ADDRESS": logind.bus.address, "DBUS_SESSION_BUS_ADDRESS": session.address]
        try n.start()
        let daemonInhibit = try #require(next("inhibit"), "\(n.log)")
        #expect(daemonInhibit["inhibit"]?["reason"] == "presence.keepAwake", "\(daemonInhibit)")
        #expect(waitUntil(timeout: 10) {
            (try? n.cli(["status"]).stdout.contains("held: logind's idle and sleep lock and the desktop portal's idle inhibitor (presence.keepAwake)")) == true
        }, "\((try? n.cli(["status"]).stdout) ?? "")")
        #expect(n.stop() == 0)
        #expect(try #require(next("uninhibit"), "the inhibition outlived the daemon")["uninhibit"] == daemonInhibit["inhibit"]?["cookie"])
    }

    /// Without a desktop portal on the session bus, logind's lock alone is held and the log says
    /// the desktop may still blank its screen.
    @Test func aSessionBusWithoutAPortalLeavesLogindsLockAlone() throws {
        let logind = try Logind(); defer { logind.stop() }
        let session = try PrivateBus(); defer { session.stop() }
        let n = NodeUnderTest(gatewayURL: "ws://127.0.0.1:9", extra: "presence: { mode: 'manual', keepAwake: true }")
        defer { n.cleanup() }
        n.extraEnv = ["DBUS_SYSTEM_BUS_ADDRESS": logind.bus.address, "DBUS_SESSION_BUS_ADDRESS": session.address]
        try n.start()
        _ = try #require(logind.next("inhibit"), "\(n.log)")
        #expect(waitUntil(timeout: 10) { n.log.contains("the desktop portal gave no idle inhibitor") && n.log.contains("may still blank its screen") }, "\(n.log)")
        #expect(waitUntil(timeout: 10) { (try? n.cli(["status"]).stdout.contains("Keep awake:   held: logind's idle and sleep lock (presence.keepAwake)")) == true })
        #expect(n.stop() == 0)
    }

    @Test func withoutLogindStatusSaysWhyAndTheNodeRunsOn() throws {
        let bus = try PrivateBus(); defer { bus.stop() }   // a system bus, but nobody owns org.freedesktop.login1
        let n = NodeUnderTest(gatewayURL: "ws://127.0.0.1:9", extra: "presence: { mode: 'manual', keepAwake: true }")
        defer { n.cleanup() }
        n.extraEnv = ["DBUS_SYSTEM_BUS_ADDRESS": bus.address]
        try n.start()
        #expect(waitUntil(timeout: 10) { n.log.contains("cannot keep the device awake: logind refused the idle and sleep lock") }, "\(n.log)")
        let status = try n.cli(["status"]).stdout
        #expect(status.contains("Keep awake:   wanted (presence.keepAwake) but not held: logind refused"), "\(status)")
        #expect(n.isRunning)
        #expect(n.stop() == 0)
    }
}
