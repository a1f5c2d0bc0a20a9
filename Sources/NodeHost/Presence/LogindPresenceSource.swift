import CSystemd
import Config
import Glibc
import Kit
import Support

/// What the logind source needs to know about seats and sessions. The real one asks systemd-logind
/// (sd-login + D-Bus); tests inject another to drive each branch.
public protocol LogindBackend: Sendable {
    /// Seats logind knows (empty on a headless box or without systemd).
    func seats() -> [String]
    /// The session this process belongs to, if it runs inside one (a desktop autostart).
    func ownSession() -> String?
    /// The seat a session is attached to.
    func seat(ofSession session: String) -> String?
    /// The foreground session of a seat.
    func activeSession(onSeat seat: String) -> String?
    /// Session properties from D-Bus; nil when logind cannot be asked.
    func sessionState(_ session: String) -> LogindSessionState?
}

public struct LogindSessionState: Sendable, Equatable {
    public var active: Bool
    public var locked: Bool
    public var idle: Bool
    public init(active: Bool, locked: Bool, idle: Bool) { self.active = active; self.locked = locked; self.idle = idle }
}

/// `presence.mode: "auto"`: foreground when the session we belong to (or, for a system service, the
/// active session on seat0) is active, unlocked and not idle. A box with no seat at all is headless:
/// nobody can be "at" it, so foreground-only commands are allowed there.
public struct LogindPresenceSource: PresenceSource {
    let backend: any LogindBackend
    public init(backend: any LogindBackend = SystemdLogind()) { self.backend = backend }

    public func sample() async -> PresenceSample {
        let session: String
        if let own = backend.ownSession(), let seat = backend.seat(ofSession: own) {
            session = own
            _ = seat
        } else {
            let seats = backend.seats()
            guard !seats.isEmpty else { return PresenceSample(.foreground, "no seat (headless device)") }
            let seat = seats.contains("seat0") ? "seat0" : seats[0]
            guard let active = backend.activeSession(onSeat: seat) else {
                return PresenceSample(.background, "nobody is logged in on \(seat)")
            }
            session = active
        }
        guard let state = backend.sessionState(session) else {
            return PresenceSample(.foreground, "session \(session) (logind not reachable over D-Bus; assuming active)")
        }
        if !state.active { return PresenceSample(.background, "session \(session) is not the active session") }
        if state.locked { return PresenceSample(.background, "session \(session) is locked") }
        if state.idle { return PresenceSample(.background, "session \(session) is idle") }
        return PresenceSample(.foreground, "session \(session) is active and unlocked")
    }
}

/// The real logind: sd-login reads /run/systemd; properties come over the system bus. Without
/// libsystemd (SystemdLibrary) there are no seats and no sessions: presence says so.
public final class SystemdLogind: LogindBackend, Sendable {
    /// The system bus connection (sd_bus is not thread-safe: used only under this lock).
    private let bus = Locked<Confined<OpaquePointer?>>(confining: nil)
    private let sd = try? SystemdLibrary.shared.get()

    public init() {}
    deinit { if let b = bus.withConfined({ $0 }), let sd { _ = sd.busUnref(b) } }

    public func seats() -> [String] {
        guard let sd else { return [] }
        var list: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
        let n = sd.getSeats(&list)
        guard n > 0, let list else { return [] }
        defer { free(list) }
        var out: [String] = []
        for i in 0..<Int(n) {
            if let s = list[i] { out.append(String(cString: s)); free(s) }
        }
        return out
    }

    public func ownSession() -> String? {
        var s: UnsafeMutablePointer<CChar>?
        guard let sd, sd.pidGetSession(0, &s) >= 0, let s else { return nil }
        defer { free(s) }
        return String(cString: s)
    }

    public func seat(ofSession session: String) -> String? {
        var s: UnsafeMutablePointer<CChar>?
        guard let sd, sd.sessionGetSeat(session, &s) >= 0, let s else { return nil }
        defer { free(s) }
        return String(cString: s)
    }

    public func activeSession(onSeat seat: String) -> String? {
        var s: UnsafeMutablePointer<CChar>?
        guard let sd, sd.seatGetActive(seat, &s, nil) >= 0, let s else { return nil }
        defer { free(s) }
        return String(cString: s)
    }

    public func sessionState(_ session: String) -> LogindSessionState? {
        guard let sd else { return nil }
        return bus.withConfined { bus in
            if bus == nil {
                var b: OpaquePointer?
                guard sd.busOpenSystem(&b) >= 0 else { return nil }
                bus = b
            }
            var path: UnsafeMutablePointer<CChar>?
            guard sd.busPathEncode("/org/freedesktop/login1/session", session, &path) >= 0, let path else { return nil }
            defer { free(path) }
            func prop(_ name: String) -> Bool? {
                sd.boolProperty(bus, "org.freedesktop.login1", path, "org.freedesktop.login1.Session", name)
            }
            guard let active = prop("Active") else {
                // The bus may have gone away (dbus restart): reconnect next time.
                _ = sd.busUnref(bus)
                bus = nil
                return nil
            }
            return LogindSessionState(active: active, locked: prop("LockedHint") ?? false, idle: prop("IdleHint") ?? false)
        }
    }
}

/// Builds the presence source `presence.mode` asks for.
public enum PresenceSources {
    public static func make(_ config: NodeConfig.Presence) -> any PresenceSource {
        switch config.mode {
        case .auto: return LogindPresenceSource()
        // Xlib and libwayland-client live in helper libraries, loaded only for these modes.
        case .x11: return fromHelper("x11", config)
        case .wayland: return fromHelper("wayland", config)
        // libpipewire and sd-bus's session client live in the desktop-session library.
        case .gnome: return fromHelper("session", config, mode: "gnome")
        case .always: return FixedPresenceSource(.foreground, reason: "presence.mode is always")
        case .never: return FixedPresenceSource(.background, reason: "presence.mode is never")
        case .manual: return FixedPresenceSource(.foreground, reason: "presence.mode is manual (default foreground)")
        }
    }

    /// The presence source of helper library `name` (libopenclaw-<name>.so) for mode `mode`.
    private static func fromHelper(_ name: String, _ config: NodeConfig.Presence, mode: String? = nil) -> any PresenceSource {
        switch BundleLoader.load(name) {
        case .success(let exports):
            if let make = exports.presenceSource { return make(config) }
            return FixedPresenceSource(.background, reason: "\(BundleLoader.fileName(name)) provides no presence source")
        case .failure(let f):
            return FixedPresenceSource(.background, reason: "presence.mode is \(mode ?? name), but \(f.description)")
        }
    }
}
