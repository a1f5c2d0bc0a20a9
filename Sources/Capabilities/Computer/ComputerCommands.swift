import Config
import DesktopSession
import Kit
import Support

/// `capabilities.computer.*`.
struct ComputerSettings: Sendable {
    enum Backend: String, Sendable { case auto, x11, wayland, gnome, kde }

    /// capabilities.computer.backend: auto takes the wlroots compositor's virtual input when it has
    /// it, else GNOME's RemoteDesktop when the session bus has it, else KWin's fake input (KDE),
    /// else XTest on the X display.
    var backend: Backend = .auto
    /// The X display to drive: capabilities.computer.display, else $DISPLAY.
    var display: String?
    /// The Wayland compositor to drive (wins over the X display): capabilities.computer.waylandDisplay,
    /// else $WAYLAND_DISPLAY, else the session's socket in XDG_RUNTIME_DIR, looked for at each use
    /// (WaylandSockets: a user unit started before the desktop has no WAYLAND_DISPLAY).
    var waylandDisplay: String? { waylandChoice.current }
    var waylandChoice: WaylandDisplayChoice
    /// The desktop session's D-Bus (GNOME): $DBUS_SESSION_BUS_ADDRESS, else the user bus.
    var sessionBus: String?

    init(backend: Backend = .auto, display: String? = nil, waylandDisplay: String? = nil, sessionBus: String? = nil) {
        self.backend = backend; self.display = display; self.waylandChoice = WaylandDisplayChoice(named: waylandDisplay); self.sessionBus = sessionBus
    }

    init(_ section: BundleSection, environment: [String: String]) {
        backend = section.string("backend").flatMap(Backend.init(rawValue:)) ?? .auto
        display = section.string("display") ?? environment["DISPLAY"].flatMap { $0.isEmpty ? nil : $0 }
        waylandChoice = WaylandDisplayChoice(configured: section.string("waylandDisplay"), environment: environment)
        sessionBus = SessionBus.sessionAddress(environment: environment)
    }
}

public enum ComputerCommands {
    static func handlers(_ c: ComputerCapability) -> [CommandHandler] { [
        CommandHandler("computer.act", params: ComputerActParams.self, handler: c.act),
        CommandHandler("device.apps", params: DeviceAppsParams.self, handler: c.apps),
        CommandHandler("device.apps.launch", params: DeviceAppsLaunchParams.self, handler: c.launch),
    ] }

    public static func capability(context: CapabilityContext) -> any Capability {
        ComputerCapability(manifest: context.manifest, settings: ComputerSettings(context.section, environment: context.environment),
                           clock: context.clock)
    }
}
