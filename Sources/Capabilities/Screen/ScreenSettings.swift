import Config
import DesktopSession
import Glibc
import Kit
import Support

/// `capabilities.screen` plus the environment it depends on, read once at start-up (only a
/// compositor nobody named is looked for at each use).
struct ScreenSettings: Sendable {
    enum Backend: String, Sendable { case auto, x11, wayland, gnome, kde, portal, fbdev }

    var backend: Backend = .auto
    /// X display to capture: `capabilities.screen.display`, else $DISPLAY.
    var display: String?
    var framebuffer = "/dev/fb0"
    /// Wayland compositor socket: `capabilities.screen.waylandDisplay`, else $WAYLAND_DISPLAY, else
    /// the session's socket in XDG_RUNTIME_DIR, looked for at each use (WaylandSockets: a user unit
    /// started before the desktop has no WAYLAND_DISPLAY).
    var waylandDisplay: String? { waylandChoice.current }
    var waylandChoice: WaylandDisplayChoice
    /// MIT-SHM capture (falls back to XGetImage by itself when the server refuses it).
    /// OPENCLAW_NODE_SCREEN_NO_SHM=1 forces XGetImage, for remote displays and tests.
    var useSharedMemory = true
    /// How we know this is a Wayland session ("WAYLAND_DISPLAY=wayland-0"); nil when it is not.
    /// Used to explain why X11 capture shows only XWayland windows.
    var wayland: String?
    /// ALSA PCM for screen.record's includeAudio: $OPENCLAW_NODE_AUDIO_DEVICE, else "default".
    /// (Not a config key: the config schema has no audio device yet.)
    var audioDevice = "default"
    /// The desktop session's D-Bus (GNOME's Mutter answers there): $DBUS_SESSION_BUS_ADDRESS, else
    /// the user bus in $XDG_RUNTIME_DIR.
    var sessionBus: String?
    /// The session's PipeWire ($PIPEWIRE_REMOTE, else pipewire-0 in $XDG_RUNTIME_DIR), where
    /// GNOME's and KDE's screen casts deliver frames.
    var pipewire: PipeWireRemote?
    /// Where the desktop portal's screen-share approval is kept (the bundle's state directory).
    var portalApproval = PortalApproval(directory: nil)

    init(backend: Backend = .auto, display: String? = nil, framebuffer: String = "/dev/fb0",
         useSharedMemory: Bool = true, wayland: String? = nil, audioDevice: String = "default", waylandDisplay: String? = nil, sessionBus: String? = nil, pipewire: PipeWireRemote? = nil) {
        self.backend = backend
        self.sessionBus = sessionBus
        self.pipewire = pipewire
        self.waylandChoice = WaylandDisplayChoice(named: waylandDisplay)
        self.display = display
        self.framebuffer = framebuffer
        self.useSharedMemory = useSharedMemory
        self.wayland = wayland
        self.audioDevice = audioDevice
    }

    init(_ section: BundleSection, environment env: [String: String], stateDirectory: String = "") {
        portalApproval = PortalApproval(directory: stateDirectory.isEmpty ? nil : stateDirectory)
        backend = section.string("backend").flatMap(Backend.init(rawValue:)) ?? .auto
        display = section.string("display").flatMap { $0.isEmpty ? nil : $0 } ?? env["DISPLAY"].flatMap { $0.isEmpty ? nil : $0 }
        framebuffer = section.string("fbdev").flatMap { $0.isEmpty ? nil : $0 } ?? "/dev/fb0"
        waylandChoice = WaylandDisplayChoice(configured: section.string("waylandDisplay"), environment: env)
        useSharedMemory = !["1", "true", "yes"].contains(env["OPENCLAW_NODE_SCREEN_NO_SHM"]?.lowercased() ?? "")
        wayland = ScreenSettings.waylandEvidence(env)
        audioDevice = env["OPENCLAW_NODE_AUDIO_DEVICE"].flatMap { $0.isEmpty ? nil : $0 } ?? "default"
        sessionBus = SessionBus.sessionAddress(environment: env)
        pipewire = PipeWireRemote.session(environment: env)
    }

    /// A service started outside the desktop may lack WAYLAND_DISPLAY; the session type and the
    /// compositor's socket in XDG_RUNTIME_DIR tell as well.
    static func waylandEvidence(_ env: [String: String]) -> String? {
        if let d = env["WAYLAND_DISPLAY"], !d.isEmpty { return "WAYLAND_DISPLAY=\(d)" }
        if env["XDG_SESSION_TYPE"] == "wayland" { return "XDG_SESSION_TYPE=wayland" }
        if let run = env["XDG_RUNTIME_DIR"], !run.isEmpty, FileSystem.exists(run + "/wayland-0") {
            return "a Wayland socket at \(run)/wayland-0"
        }
        return nil
    }
}
