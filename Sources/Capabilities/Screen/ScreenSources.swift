import Config
import DesktopSession
import Glibc
import Kit
import Support
import WaylandSupport
import X11Support

/// Opens a grabber on the configured backend. `auto` takes the Wayland compositor when one is known
/// and offers wlr-screencopy, else GNOME's Mutter when the session bus has its screen cast and lets
/// the node use it (before X11: under GNOME, DISPLAY is Xwayland, whose root window shows only X
/// clients), else KWin's ScreenShot2, else — in a Wayland session — the desktop portal's screen
/// cast (asks the person at the desktop once), else X11 when the display answers, else the
/// framebuffer; when none works the error lists what was tried and what to change.
struct ScreenSources: Sendable {
    let settings: ScreenSettings

    /// What a capture would use right now; X11 comes with its open connection.
    private enum Resolved {
        case x11(X11Connection)
        case wayland(WaylandConnection)
        case gnome(SessionBus)
        case kde(SessionBus, WaylandConnection)
        case portal(SessionBus)
        case framebuffer(String)
    }

    func open(screenIndex: Int) throws(NodeError) -> any ScreenGrabber {
        switch try resolve() {
        case .x11(let connection):
            return try X11Grabber(connection: connection, screenIndex: screenIndex, useSharedMemory: settings.useSharedMemory)
        case .wayland(let connection):
            return try WaylandGrabber(connection: connection, screenIndex: screenIndex)
        case .gnome(let bus):
            guard let pipewire = settings.pipewire else {
                throw ScreenError.unavailable("GNOME's screen cast needs PipeWire, but XDG_RUNTIME_DIR is unset: run the node inside the desktop session")
            }
            return try GnomeGrabber(bus: bus, pipewire: pipewire, screenIndex: screenIndex)
        case .kde(let bus, let connection):
            return try KdeGrabber(bus: bus, connection: connection, screenIndex: screenIndex)
        case .portal(let bus):
            return try PortalGrabber(bus: bus, approval: settings.portalApproval, screenIndex: screenIndex)
        case .framebuffer(let path):
            return try FramebufferGrabber(path: path, screenIndex: screenIndex)
        }
    }

    /// Whether a capture could start now (for `caps`, doctor and the connect manifest). Cheaper
    /// than `open`: no shared-memory image is set up.
    func probe() -> Availability {
        do throws(NodeError) {
            switch try resolve() {
            case .x11(let connection):
                if X11Targets.list(connection.display).isEmpty { return .unavailable("X display \(connection.name) has no screens") }
            case .wayland(let connection):
                if connection.orderedOutputs.isEmpty { return .unavailable("the Wayland compositor at \(connection.socket) has no outputs") }
            case .gnome(let bus):
                _ = try GnomeScreen.monitors(bus)
            case .kde(_, let connection):
                if connection.orderedOutputs.isEmpty { return .unavailable("KWin at \(connection.socket) has no outputs") }
            case .portal:
                break  // which monitors it shares is known only once a cast starts, and starting one may ask the person
            case .framebuffer(let path):
                _ = try FramebufferDevice(path: path).visible()
            }
            return .available
        } catch {
            return .unavailable(error.message)
        }
    }

    private func resolve() throws(NodeError) -> Resolved {
        var tried: [String] = []
        return try resolve(&tried)
    }

    /// For doctor and caps: which backend captures here and why the ones before it in `auto`'s
    /// order did not. `tryKWin`: on KDE, ask KWin for a picture too, so doctor can tell that the
    /// grant is missing before an agent finds out (caps only names the backend).
    func backendReport(tryKWin: Bool = true) -> Diagnosis? {
        var tried: [String] = []
        let label: String
        do throws(NodeError) {
            switch try resolve(&tried) {
            case .x11(let c): label = "the X display \(c.name)"
            case .wayland(let c): label = "wlr-screencopy of the Wayland compositor at \(c.socket)"
            case .gnome(let bus):
                let monitors = (try? MutterDisplays.monitors(bus)) ?? []
                label = "GNOME's Mutter screen cast over PipeWire (\(monitors.map { "\($0.connector) \($0.width)x\($0.height)" }.joined(separator: ", ")))"
            case .kde(let bus, let c):
                label = "KWin's ScreenShot2 (\(c.orderedOutputs.map { "\($0.name) \($0.width)x\($0.height)" }.joined(separator: ", ")))"
                // KWin answers only a granted program: try it, so doctor tells before an agent does.
                if tryKWin, let first = c.orderedOutputs.first {
                    do throws(SessionBus.Failure) { _ = try KWinScreenShot.capture(bus, output: first.name, includeCursor: false) } catch {
                        return Diagnosis(.fail, Self.reason(KdeScreen.refused(error)))
                    }
                }
            case .portal(let bus):
                label = "the desktop portal's screen cast (\(PortalScreenCast.interface) version \(PortalScreenCast.version(on: bus) ?? 0))"
                let how = settings.backend == .auto ? "backend auto" : "capabilities.screen.backend \"portal\""
                let notUsed = tried.isEmpty ? "" : "; not used: " + tried.joined(separator: "; ")
                guard let path = settings.portalApproval.path, settings.portalApproval.token != nil else {
                    return Diagnosis(.warn, "\(how): captures through \(label), which asks the person at this desktop before the first capture: " +
                                     "run `openclaw-node invoke screen.snapshot --timeout 90000` once while someone is there to choose Share in the desktop's " +
                                     "Screen Share dialog (with \"Remember this selection\" ticked); the approval is then kept and later captures do not ask" + notUsed)
                }
                return Diagnosis(.ok, "\(how): captures through \(label); the approval given at this desktop is kept in \(path), so it does not ask again " +
                                      "(delete that file to be asked again)" + notUsed)
            case .framebuffer(let path): label = "the framebuffer \(path)"
            }
        } catch {
            return nil  // availability says why nothing captures
        }
        let how = settings.backend == .auto ? "backend auto" : "capabilities.screen.backend \"\(settings.backend.rawValue)\""
        return Diagnosis(.ok, "\(how): captures through \(label)" + (tried.isEmpty ? "" : "; not used: " + tried.joined(separator: "; ")))
    }

    private func resolve(_ tried: inout [String]) throws(NodeError) -> Resolved {
        switch settings.backend {
        case .x11:
            guard let display = settings.display else {
                throw ScreenError.unavailable("capabilities.screen.backend is \"x11\" but no X display is known: DISPLAY is unset " +
                                              "and capabilities.screen.display is not configured" + waylandNote)
            }
            return .x11(try X11Connection(name: display))
        case .wayland:
            guard let socket = settings.waylandDisplay else {
                throw ScreenError.unavailable("capabilities.screen.backend is \"wayland\" but no compositor is known: WAYLAND_DISPLAY is unset, " +
                                              "capabilities.screen.waylandDisplay is not configured and XDG_RUNTIME_DIR has no wayland-N socket")
            }
            let c = try WaylandConnection(socket: socket)
            guard c.screencopy != nil else { throw WaylandScreen.noScreencopy(c) }
            return .wayland(c)
        case .gnome:
            return .gnome(try gnomeBus(required: true)!)
        case .kde:
            guard let k = try kde(required: true) else { throw ScreenError.unavailable("no KWin") }
            return .kde(k.0, k.1)
        case .portal:
            return .portal(try portalBus(required: true)!)
        case .fbdev:
            return .framebuffer(settings.framebuffer)
        case .auto:
            var noScreencopy: WaylandConnection?
            if let socket = settings.waylandDisplay {
                do throws(NodeError) {
                    let c = try WaylandConnection(socket: socket)
                    if c.screencopy != nil { return .wayland(c) }
                    tried.append("the Wayland compositor at \(c.socket) offers no wlr-screencopy")
                    noScreencopy = c
                } catch { tried.append(Self.reason(error)) }
            }
            do throws(NodeError) {
                if let bus = try gnomeBus(required: false) {
                    // A GNOME that closed Mutter's API, or a sandbox filtering the bus, refuses it.
                    guard let refusal = MutterScreenCast.refusal(on: bus) else { return .gnome(bus) }
                    tried.append("GNOME's Mutter refuses this program its screen cast (\(refusal.name))")
                } else {
                    tried.append(settings.sessionBus == nil ? "no session bus (DBUS_SESSION_BUS_ADDRESS unset), so no GNOME"
                                                            : "no GNOME on the session bus (\(MutterScreenCast.service) is not there)")
                }
            } catch { tried.append(Self.reason(error)) }
            if noScreencopy != nil {
                do throws(NodeError) {
                    if let k = try kde(required: false) { return .kde(k.0, k.1) }
                    tried.append("no KDE on the session bus (\(KWinScreenShot.service) with ScreenShot2 is not there)")
                } catch { tried.append(Self.reason(error)) }
            }
            // The portal asks the person at the desktop, so only where nothing unattended works
            // and the session is Wayland (on X11 the display itself is captured below).
            if settings.wayland != nil || noScreencopy != nil {
                do throws(NodeError) {
                    if let bus = try portalBus(required: false) { return .portal(bus) }
                    tried.append("no desktop portal with screen casts on the session bus (\(PortalScreenCast.interface))")
                } catch { tried.append(Self.reason(error)) }
            }
            if let display = settings.display {
                do throws(NodeError) { return .x11(try X11Connection(name: display)) }
                catch { tried.append("X display \(display) is not reachable (is it running; may this user connect: XAUTHORITY?)") }
            } else {
                tried.append("no X display (DISPLAY is unset and capabilities.screen.display is not configured)")
            }
            if FileSystem.exists(settings.framebuffer) { return .framebuffer(settings.framebuffer) }
            tried.append("no framebuffer at \(settings.framebuffer) (capabilities.screen.fbdev)")
            let guidance = noScreencopy.map { ". " + Self.reason(WaylandScreen.noScreencopy($0)) } ?? ""
            throw ScreenError.unavailable("nothing to capture: " + tried.joined(separator: "; ") + guidance + waylandNote)
        }
    }

    /// The session bus, connected, for a backend that works over it; nil (or, when `required`, an
    /// error saying why, and `whereToRun` what to do) when none is known or it cannot be reached.
    private func connectSessionBus(_ backend: String, required: Bool, whereToRun: String) throws(NodeError) -> SessionBus? {
        guard let address = settings.sessionBus else {
            guard required else { return nil }
            throw ScreenError.unavailable("capabilities.screen.backend is \"\(backend)\" but no session bus is known: DBUS_SESSION_BUS_ADDRESS " +
                                          "is unset and XDG_RUNTIME_DIR has no bus (\(whereToRun))")
        }
        do throws(SessionBus.Failure) { return try SessionBus(address: address) } catch {
            guard required else { return nil }
            throw ScreenError.unavailable("capabilities.screen.backend is \"\(backend)\": \(error.description)")
        }
    }

    /// The session bus when GNOME's Mutter offers its screen cast there; nil (or, when `required`,
    /// an error saying why) when it does not.
    private func gnomeBus(required: Bool) throws(NodeError) -> SessionBus? {
        guard let bus = try connectSessionBus("gnome", required: required,
                                              whereToRun: "run the node inside the GNOME session, e.g. as a systemd --user service") else { return nil }
        if bus.hasOwner(MutterScreenCast.service) { return bus }
        guard required else { return nil }
        throw ScreenError.unavailable("capabilities.screen.backend is \"gnome\" but nothing on the session bus at \(bus.address) offers " +
                                      "\(MutterScreenCast.service) (is this a GNOME session?)")
    }

    /// The session bus when the desktop portal there offers screen casts; nil (or, when `required`,
    /// an error saying why) when it does not.
    private func portalBus(required: Bool) throws(NodeError) -> SessionBus? {
        guard let bus = try connectSessionBus("portal", required: required, whereToRun: "run the node inside the desktop session") else { return nil }
        if PortalScreenCast.version(on: bus) != nil { return bus }
        guard required else { return nil }
        throw ScreenError.unavailable("capabilities.screen.backend is \"portal\" but the desktop portal on the session bus at \(bus.address) offers no " +
                                      "screen casts (\(PortalScreenCast.interface)): install xdg-desktop-portal and the desktop's backend " +
                                      "(xdg-desktop-portal-gnome on GNOME, xdg-desktop-portal-kde on Plasma)")
    }

    /// KWin's session bus and its Wayland connection when KWin offers ScreenShot2; nil (or, when
    /// `required`, an error saying why) when it does not.
    private func kde(required: Bool) throws(NodeError) -> (SessionBus, WaylandConnection)? {
        guard settings.sessionBus != nil, let socket = settings.waylandDisplay else {
            guard required else { return nil }
            throw ScreenError.unavailable("capabilities.screen.backend is \"kde\" but the session bus or the Wayland socket is not known " +
                                          "(DBUS_SESSION_BUS_ADDRESS, WAYLAND_DISPLAY): run the node inside the Plasma session")
        }
        guard let bus = try connectSessionBus("kde", required: required, whereToRun: "run the node inside the Plasma session") else { return nil }
        guard KWinScreenShot.isOffered(on: bus) else {
            guard required else { return nil }
            throw ScreenError.unavailable("capabilities.screen.backend is \"kde\" but nothing on the session bus offers \(KWinScreenShot.interface) (is this a Plasma session?)")
        }
        return (bus, try WaylandConnection(socket: socket))
    }

    /// An error's text without its code ("SCREEN_UNAVAILABLE: …"), for lists of reasons.
    static func reason(_ e: NodeError) -> String {
        let m = e.message
        guard let colon = m.firstIndex(of: ":"), m[..<colon].allSatisfy({ $0.isUppercase || $0 == "_" }),
              m[m.index(after: colon)...].hasPrefix(" ") else { return m }
        return String(m[m.index(colon, offsetBy: 2)...])
    }

    private var waylandNote: String {
        guard let wayland = settings.wayland, settings.waylandDisplay == nil else { return "" }
        return ". This looks like a Wayland session (\(wayland)) but the compositor's socket is not known: set " +
               "capabilities.screen.waylandDisplay (e.g. \"wayland-0\", or WAYLAND_DISPLAY in the service's environment) to capture it"
    }
}
