import Glibc
import Support

/// The desktops an operator is looking at through desktop.stream right now. The desktop bundle
/// announces its streams here and computer control (another bundle) listens: an operator at the
/// gateway's viewer counts as a person at the desk, so the agent's execution stops when a stream
/// starts and computer.act waits until it ends, instead of both moving one pointer. Kit is one
/// shared copy in the daemon, so both bundles see the same registry.
public final class RemoteDesktopSessions: Sendable {
    public static let shared = RemoteDesktopSessions()

    /// One stream's claim on a desktop; `end` gives it back.
    public struct Claim: Sendable, Hashable {
        fileprivate let id: UInt64
        public let desktop: String
    }

    private struct State {
        var next: UInt64 = 0
        var claims: [UInt64: String] = [:]
        var observers: [UInt64: @Sendable (String) -> Void] = [:]
    }
    private let state = Locked(State())

    /// The name both bundles use for a desktop: "x11:<display>" without a screen number or a
    /// "unix" host, or "wayland:<absolute socket path>" (a bare name is under XDG_RUNTIME_DIR).
    public static func desktop(x11Display display: String) -> String {
        var d = Substring(display)
        if d.hasPrefix("unix:") { d = d.dropFirst(4) }
        if let colon = d.lastIndex(of: ":"), let dot = d[colon...].firstIndex(of: ".") { d = d[..<dot] }
        return "x11:" + d
    }

    public static func desktop(waylandSocket socket: String, environment: [String: String]) -> String {
        "wayland:" + waylandSocketPath(socket, environment: environment)
    }

    /// A compositor socket as an absolute path: a bare name (WAYLAND_DISPLAY's usual form) is in
    /// XDG_RUNTIME_DIR, as libwayland finds it.
    public static func waylandSocketPath(_ socket: String, environment: [String: String]) -> String {
        socket.hasPrefix("/") ? socket : (environment["XDG_RUNTIME_DIR"] ?? "/run/user/\(getuid())") + "/" + socket
    }

    /// A stream begins showing `desktop`: every observer hears of it before this returns.
    public func begin(_ desktop: String) -> Claim {
        let (claim, observers) = state.withLock { s -> (Claim, [@Sendable (String) -> Void]) in
            s.next += 1
            s.claims[s.next] = desktop
            return (Claim(id: s.next, desktop: desktop), Array(s.observers.values))
        }
        for o in observers { o(desktop) }
        return claim
    }

    public func end(_ claim: Claim) { _ = state.withLock { $0.claims.removeValue(forKey: claim.id) } }

    /// Whether an operator is looking at `desktop` now.
    public func isShown(_ desktop: String) -> Bool { state.withLock { $0.claims.values.contains(desktop) } }

    /// `handler(desktop)` runs on the announcing thread whenever a stream begins; the returned
    /// number removes it.
    public func observe(_ handler: @escaping @Sendable (String) -> Void) -> UInt64 {
        state.withLock { s in
            s.next += 1
            s.observers[s.next] = handler
            return s.next
        }
    }

    public func removeObserver(_ id: UInt64) { _ = state.withLock { $0.observers.removeValue(forKey: id) } }
}
