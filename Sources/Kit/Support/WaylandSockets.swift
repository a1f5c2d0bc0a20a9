/// Which Wayland compositor the node's desktop capabilities use when the config names none. A
/// service started before the desktop — the package's user unit starts with the user's systemd
/// manager, at boot with lingering or at the first login — has no WAYLAND_DISPLAY: GNOME and
/// Plasma import it into the manager's environment when the session starts, too late for a unit
/// already running. So after the config and the environment, the compositor's own socket is looked
/// for in XDG_RUNTIME_DIR, at each use, and a session that started after the node is found without
/// a restart.
public enum WaylandSockets {
    /// `configured` (a capability's `waylandDisplay`), else WAYLAND_DISPLAY, else the session's
    /// compositor socket found in XDG_RUNTIME_DIR now; nil when there is none.
    public static func display(configured: String?, environment: [String: String]) -> String? {
        WaylandDisplayChoice(configured: configured, environment: environment).current
    }

    /// The lowest-numbered `wayland-N` socket in the runtime directory: the session's compositor
    /// (libwayland numbers from 0; a nested or second compositor takes the next free number).
    public static func discovered(runtimeDirectory: String?) -> String? {
        guard let dir = runtimeDirectory, !dir.isEmpty, let names = try? FileSystem.contentsOfDirectory(dir) else { return nil }
        let numbered = names.compactMap { name -> (Int, String)? in
            guard name.hasPrefix("wayland-"), let n = Int(name.dropFirst("wayland-".count)), n >= 0 else { return nil }
            return (n, name)
        }
        return numbered.sorted { $0.0 < $1.0 }.first { FileSystem.isSocket(dir + "/" + $0.1) }?.1
    }
}

/// A capability's compositor, as its settings keep it: what the config or WAYLAND_DISPLAY named
/// when it loaded, and the runtime directory where one nobody named is looked for at each use.
public struct WaylandDisplayChoice: Sendable {
    public let named: String?
    public let runtimeDirectory: String?

    public init(named: String?, runtimeDirectory: String? = nil) {
        self.named = named.flatMap { $0.isEmpty ? nil : $0 }
        self.runtimeDirectory = runtimeDirectory
    }

    /// From a capability's `waylandDisplay` key and the environment it loaded in.
    public init(configured: String?, environment: [String: String]) {
        self.init(named: configured.flatMap { $0.isEmpty ? nil : $0 } ?? environment["WAYLAND_DISPLAY"],
                  runtimeDirectory: environment["XDG_RUNTIME_DIR"])
    }

    /// The compositor to use now: the named one, else the session's socket found now.
    public var current: String? { named ?? WaylandSockets.discovered(runtimeDirectory: runtimeDirectory) }
}
