import Glibc
import Kit
import Support

/// The desktop session's idle inhibitor through the XDG desktop portal (org.freedesktop.portal.Inhibit):
/// what keeps a GNOME or KDE session from blanking and locking its screen, which logind's idle lock
/// does not do there (the session's own power manager follows the session's inhibitors). The portal
/// hands the request to the desktop's backend (GNOME's session manager, the freedesktop ScreenSaver
/// API of KDE and others). Held on a session-bus connection of its own: the portal ends an
/// inhibition when its caller's connection goes, so a daemon that dies takes it along.
final class PortalInhibition: @unchecked Sendable {
    // Unchecked: used by the keeper's one reconcile at a time (its `reconciling` lock).
    private let lib: SystemdLibrary
    private var bus: SystemdLibrary.Bus?
    private let request: String

    /// Idle only: suspend is logind's lock's part, and backends that speak the ScreenSaver API
    /// refuse an inhibition of anything but idle.
    static let idle: UInt32 = 8

    private init(lib: SystemdLibrary, bus: SystemdLibrary.Bus, request: String) {
        self.lib = lib; self.bus = bus; self.request = request
    }

    /// nil when this process has no session bus (a system service: nothing to ask); else the
    /// inhibition or why the portal would not give one.
    @Sendable static func take(_ why: String) -> Result<PortalInhibition, InhibitFailure>? {
        guard case .success(let lib) = SystemdLibrary.shared else { return nil }
        var opened: SystemdLibrary.Bus?
        guard lib.busOpenUser(&opened) >= 0, let bus = opened else { return nil }
        switch lib.portalInhibit(bus, flags: idle, why: String(why.prefix(200))) {
        case .success(let request): return .success(PortalInhibition(lib: lib, bus: bus, request: request))
        case .failure(let f):
            _ = lib.busFlushCloseUnref(bus)
            return .failure(InhibitFailure("the desktop portal gave no idle inhibitor (\(f.description))"))
        }
    }

    /// Closes the request (the backend lets the session idle again), then the connection.
    func release() {
        guard let bus else { return }
        _ = lib.closePortalRequest(bus, request)
        _ = lib.busFlushCloseUnref(bus)
        self.bus = nil
    }

    deinit { release() }
}
