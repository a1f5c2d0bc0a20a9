import Config
import DesktopSession
import Glibc
import Kit
import Support

/// `capabilities.desktop` plus the environment it depends on (the config check has made sure of
/// the types and ranges).
struct DesktopSettings: Sendable {
    enum Server: String, Sendable { case auto, external }
    /// server: auto — which desktop the node's stream serves (auto: what the session offers).
    enum Backend: String, Sendable { case auto, x11, wayland, gnome, kde }

    let server: Server
    let backend: Backend
    /// server: external — the VNC server's TCP port on 127.0.0.1.
    let port: Int
    /// server: external — where its password is.
    let passwordFile: String?
    /// server: auto — the X display (config, else $DISPLAY).
    let display: String?
    /// server: auto — the compositor socket as an absolute path (config or $WAYLAND_DISPLAY, a
    /// name resolved in $XDG_RUNTIME_DIR; else the session's socket there, looked for at each use:
    /// a user unit started before the desktop has no WAYLAND_DISPLAY).
    var waylandSocket: String? { wayland.current.map { RemoteDesktopSessions.waylandSocketPath($0, environment: environment) } }
    private let wayland: WaylandDisplayChoice
    /// What the VNC server the node starts inherits (XAUTHORITY, XDG_RUNTIME_DIR, PATH).
    let environment: [String: String]
    /// server: auto on GNOME — the session bus and PipeWire of the desktop session.
    let sessionBus: String?
    let pipewire: PipeWireRemote?

    init(_ section: BundleSection, environment env: [String: String]) {
        func nonEmpty(_ s: String?) -> String? { s.flatMap { $0.isEmpty ? nil : $0 } }
        server = section.string("server").flatMap(Server.init(rawValue:)) ?? .auto
        backend = section.string("backend").flatMap(Backend.init(rawValue:)) ?? .auto
        port = section.int("port") ?? 5900
        passwordFile = nonEmpty(section.string("passwordFile"))
        display = nonEmpty(section.string("display")) ?? nonEmpty(env["DISPLAY"])
        wayland = WaylandDisplayChoice(configured: section.string("waylandDisplay"), environment: env)
        environment = env
        sessionBus = SessionBus.sessionAddress(environment: env)
        pipewire = PipeWireRemote.session(environment: env)
    }

    /// The desktop a stream shows, as computer control names it (RemoteDesktopSessions): the
    /// compositor when its socket is there (what `auto` serves first), else the X display. An
    /// external server is taken to show the same session.
    var shownDesktop: String? {
        if let socket = waylandSocket, FileSystem.isSocket(socket) { return RemoteDesktopSessions.desktop(waylandSocket: socket, environment: environment) }
        return display.map(RemoteDesktopSessions.desktop(x11Display:))
    }
}
