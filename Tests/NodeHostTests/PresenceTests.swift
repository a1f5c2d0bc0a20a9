import CX11
@testable import Config
import Foundation
@testable import HostPresence
@testable import Kit
@testable import NodeCLI
@testable import Registry
@testable import Store
@testable import Support
@testable import TestSupport
import Testing
import X11Support

/// Drives LogindPresenceSource's decisions (there is no logind on CI machines).
struct FakeLogind: LogindBackend {
    var seatList: [String] = []
    var own: String?
    var ownSeat: String?
    var active: [String: String] = [:]
    var states: [String: LogindSessionState] = [:]
    func seats() -> [String] { seatList }
    func ownSession() -> String? { own }
    func seat(ofSession session: String) -> String? { session == own ? ownSeat : nil }
    func activeSession(onSeat seat: String) -> String? { active[seat] }
    func sessionState(_ session: String) -> LogindSessionState? { states[session] }
}

@Suite struct LogindPresenceTests {
    @Test func noSeatIsHeadlessForeground() async {
        let s = await LogindPresenceSource(backend: FakeLogind()).sample()
        #expect(s.presence == .foreground)
        #expect(s.reason.contains("headless"))
    }

    @Test func seatWithoutSessionIsBackground() async {
        let s = await LogindPresenceSource(backend: FakeLogind(seatList: ["seat0"])).sample()
        #expect(s == PresenceSample(.background, "nobody is logged in on seat0"))
    }

    @Test(arguments: [
        (LogindSessionState(active: true, locked: false, idle: false), Presence.foreground, "active and unlocked"),
        (LogindSessionState(active: true, locked: true, idle: false), Presence.background, "locked"),
        (LogindSessionState(active: true, locked: false, idle: true), Presence.background, "idle"),
        (LogindSessionState(active: false, locked: false, idle: false), Presence.background, "not the active session"),
    ])
    func activeSessionStates(state: LogindSessionState, expected: Presence, reason: String) async {
        let fake = FakeLogind(seatList: ["seat0"], active: ["seat0": "3"], states: ["3": state])
        let s = await LogindPresenceSource(backend: fake).sample()
        #expect(s.presence == expected)
        #expect(s.reason.contains(reason))
    }

    @Test func ownSessionWins() async {
        let fake = FakeLogind(seatList: ["seat0"], own: "7", ownSeat: "seat0", active: ["seat0": "3"],
                              states: ["3": .init(active: true, locked: false, idle: false),
                                       "7": .init(active: false, locked: false, idle: false)])
        let s = await LogindPresenceSource(backend: fake).sample()
        #expect(s.presence == .background)
        #expect(s.reason.contains("session 7"))
    }

    @Test func realLogindOnThisMachineAnswers() async {
        // Whatever this machine is (no systemd in CI containers), the real backend must answer, not crash.
        let s = await LogindPresenceSource().sample()
        #expect(!s.reason.isEmpty)
    }
}

@Suite struct PresenceMonitorTests {
    @Test func overrideAndAuto() async {
        let m = PresenceMonitor(mode: .always, source: FixedPresenceSource(.foreground, reason: "fixed"))
        #expect(await m.current == .foreground)
        await m.setOverride(.background)
        #expect(await m.current == .background)
        await m.setOverride(nil)
        #expect(await m.current == .foreground)
    }

    @Test func transitionsAreReported() async {
        let m = PresenceMonitor(mode: .manual, source: FixedPresenceSource(.foreground, reason: "fixed"))
        let stream = await m.transitions()
        await m.refresh()
        await m.setOverride(.background)
        var it = stream.makeAsyncIterator()
        #expect(await it.next()?.presence == .foreground)
        #expect(await it.next()?.presence == .background)
    }

    @Test func sourcesFromConfig() async {
        #expect(await PresenceSources.make(.init(mode: .never)).sample().presence == .background)
        #expect(await PresenceSources.make(.init(mode: .always)).sample().presence == .foreground)
        #expect(await PresenceSources.make(.init(mode: .manual)).sample().presence == .foreground)
    }
}

/// The x11 source against a real X server: the screensaver is switched on and off through the
/// MIT-SCREEN-SAVER machinery exactly as a screen locker would.
@Suite(.serialized) struct X11PresenceTests {
    @Test func screensaverStateDrivesPresence() async throws {
        let x = try Xvfb()
        defer { x.stop() }
        // Through the core's factory: presence.mode x11 loads libopenclaw-x11.so at run time.
        let source = PresenceSources.make(.init(mode: .x11, display: x.display))
        let first = await source.sample()
        #expect(source is X11PresenceSource, "the X11 helper library was not loaded: \(first.reason)")
        #expect(first.presence == .foreground)

        let dpy = try #require(XOpenDisplay(x.display))
        defer { XCloseDisplay(dpy) }
        XForceScreenSaver(dpy, ScreenSaverActive)
        XSync(dpy, 0)
        let bg = await source.sample()
        #expect(bg.presence == .background)
        #expect(bg.reason.contains("screensaver active"))

        XForceScreenSaver(dpy, ScreenSaverReset)
        XSync(dpy, 0)
        #expect(await source.sample().presence == .foreground)
    }

    @Test func unreachableDisplayIsBackgroundWithReason() async {
        let s = await X11PresenceSource(display: ":987").sample()
        #expect(s.presence == .background)
        #expect(s.reason.contains(":987"))
    }

    @Test func serverGoingAwayIsNoticed() async throws {
        let x = try Xvfb()
        let source = X11PresenceSource(display: x.display)
        #expect(await source.sample().presence == .foreground)
        x.stop()
        // Xlib's default I/O error handler would exit the whole process here.
        let s = await source.sample()
        #expect(s.presence == .background)
        // A new server on the same display is picked up again.
        let again = await X11PresenceSource(display: x.display).sample()
        #expect(again.presence == .background)
    }
}
