import Kit
import Support

/// A screen cast of one GNOME monitor through Mutter's own API (org.gnome.Mutter.ScreenCast, what
/// gnome-remote-desktop uses): no portal and no dialog, for any process on the user's session bus.
/// The session is opened here and stopped when this is dropped; while it runs GNOME shows its
/// screen-sharing indicator in the top bar. Frames come from `stream` (PipeWire), on damage only.
public final class MutterScreenCast {
    public static let service = "org.gnome.Mutter.ScreenCast"
    public static let remoteDesktopService = "org.gnome.Mutter.RemoteDesktop"

    /// How the pointer appears in the frames (Mutter's cursor-mode).
    public enum Cursor: UInt32, Sendable { case hidden = 0, embedded = 1 }

    public let bus: SessionBus
    public let monitor: MutterMonitor
    public let sessionPath: String
    public let streamPath: String
    public let stream: PipeWireStream
    /// The RemoteDesktop session this cast belongs to (MutterRemoteDesktop), if any.
    public let remoteDesktopSession: String?

    /// Casts `monitor`; with `remoteDesktopSession` (a RemoteDesktop session's SessionId) the cast
    /// is that session's, and input aimed at its stream lands on this monitor.
    public init(bus: SessionBus, pipewire: PipeWireRemote, monitor: MutterMonitor, cursor: Cursor, remoteDesktopSession: String? = nil,
                startsSession: Bool = true, timeout: Duration = .seconds(5)) throws(SessionBus.Failure) {
        self.bus = bus
        self.monitor = monitor
        self.remoteDesktopSession = remoteDesktopSession
        var properties: [(String, DBusValue)] = [("disable-animations", .bool(false))]
        if let rd = remoteDesktopSession { properties.append(("remote-desktop-session-id", .string(rd))) }
        let created = try bus.call(Self.service, "/org/gnome/Mutter/ScreenCast", Self.service, "CreateSession", [.options(properties)])
        guard let session = created.first?.string else { throw SessionBus.Failure(name: "reply", message: "ScreenCast.CreateSession returned no session") }
        sessionPath = session
        var started = false
        defer { if !started { _ = try? bus.call(Self.service, session, Self.service + ".Session", "Stop", timeout: .seconds(2)) } }
        let recorded = try bus.call(Self.service, session, Self.service + ".Session", "RecordMonitor",
                                    [.string(monitor.connector), .options([("cursor-mode", .uint32(cursor.rawValue))])])
        guard let streamPath = recorded.first?.string else { throw SessionBus.Failure(name: "reply", message: "RecordMonitor returned no stream") }
        self.streamPath = streamPath
        let added = try bus.subscribe(path: streamPath, interface: Self.service + ".Stream", member: "PipeWireStreamAdded")
        // A cast bound to a RemoteDesktop session starts with that session (its owner starts it).
        if startsSession {
            try bus.call(Self.service, session, Self.service + ".Session", "Start")
        } else if let rd = remoteDesktopSession {
            try bus.call(Self.remoteDesktopService, "/org/gnome/Mutter/RemoteDesktop/Session/\(rd)", Self.remoteDesktopService + ".Session", "Start")
        }
        let signal = try bus.next(added, timeout: timeout)
        guard let node = signal.first?.int, let nodeId = UInt32(exactly: node) else {
            throw SessionBus.Failure(name: "signal", message: "PipeWireStreamAdded carried no node id")
        }
        do throws(PipeWireStream.Failure) {
            stream = try PipeWireStream(nodeId: nodeId, remote: pipewire, name: "openclaw-node \(monitor.connector)")
        } catch {
            throw SessionBus.Failure(name: "pipewire", message: error.description)
        }
        started = true
    }

    /// Why Mutter refuses this program a screen cast (the D-Bus error), or nil when it lets it:
    /// a session is made and stopped at once, without recording (nothing shows on the screen).
    /// Mutter 43 lets any program of the session in; a sandbox's bus filter or a GNOME that
    /// closed the API answers AccessDenied.
    public static func refusal(on bus: SessionBus) -> SessionBus.Failure? {
        do throws(SessionBus.Failure) {
            let created = try bus.call(service, "/org/gnome/Mutter/ScreenCast", service, "CreateSession", [.options([])], timeout: .seconds(3))
            if let session = created.first?.string {
                _ = try? bus.call(service, session, service + ".Session", "Stop", timeout: .seconds(2))
            }
            return nil
        } catch {
            return error
        }
    }

    deinit {
        // The RemoteDesktop session's owner stops it (and this cast with it).
        if remoteDesktopSession == nil {
            _ = try? bus.call(Self.service, sessionPath, Self.service + ".Session", "Stop", timeout: .seconds(2))
        }
    }
}
