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
        if let name = configured, !name.isEmpty { return name }
        if let name = environment["WAYLAND_DISPLAY"], !name.isEmpty { return name }
        return discovered(runtimeDirectory: environment["XDG_RUNTIME_DIR"])
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
