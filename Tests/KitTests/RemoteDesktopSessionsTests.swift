@testable import Kit
import Support
import Testing

/// The registry computer control and desktop.stream share: one name for one desktop however it
/// is written, observers told of a stream before it is shown, a claim given back at the end.
struct RemoteDesktopSessionsTests {
    @Test func oneDesktopHasOneName() {
        for d in [":99", ":99.0", "unix:99", "unix:99.1"] { #expect(RemoteDesktopSessions.desktop(x11Display: d) == "x11::99", "\(d)") }
        #expect(RemoteDesktopSessions.desktop(x11Display: ":9") != RemoteDesktopSessions.desktop(x11Display: ":99"))
        #expect(RemoteDesktopSessions.desktop(waylandSocket: "wayland-1", environment: ["XDG_RUNTIME_DIR": "/run/user/7"])
                == RemoteDesktopSessions.desktop(waylandSocket: "/run/user/7/wayland-1", environment: [:]))
    }

    @Test func observersHearOfAStreamAndClaimsEnd() {
        let sessions = RemoteDesktopSessions()
        let heard = Locked<[String]>([])
        let id = sessions.observe { d in heard.withLock { $0.append(d) } }
        let claim = sessions.begin("x11::5")
        #expect(heard.withLock { $0 } == ["x11::5"] && sessions.isShown("x11::5") && !sessions.isShown("x11::6"))
        let second = sessions.begin("x11::5")
        sessions.end(claim)
        #expect(sessions.isShown("x11::5"), "another stream still shows it")
        sessions.end(second)
        #expect(!sessions.isShown("x11::5"))
        sessions.removeObserver(id)
        _ = sessions.begin("x11::6")
        #expect(heard.withLock { $0 }.count == 2)
    }
}
