import Glibc
import Support

/// A screen cast through the desktop portal (org.freedesktop.portal.ScreenCast): the way for a
/// program that Mutter's own API refuses (a GNOME that closed it to other programs) or does not
/// see (a sandbox that filters the session bus). The first session asks the person at the desktop
/// (GNOME's "Screen Share" dialog, "Remember this selection" ticked); the portal then answers with
/// a restore token, and a later session that presents it starts without asking. The session is
/// closed when this is dropped.
public final class PortalScreenCast {
    public static let interface = "org.freedesktop.portal.ScreenCast"

    /// How the pointer appears in the frames (the portal's cursor_mode bits).
    public enum Cursor: UInt32, Sendable { case hidden = 1, embedded = 2 }

    /// One shared monitor: its PipeWire node and where it sits on the desktop.
    public struct Monitor: Sendable, Equatable {
        public let nodeId: UInt32
        public let x: Int, y: Int, width: Int, height: Int
    }

    public let bus: SessionBus
    public let sessionHandle: String
    /// The shared monitors in screenIndex order: by position, left to right, then top to bottom.
    public let monitors: [Monitor]
    /// What to present next time to start without asking (nil: the portal gave none).
    public let restoreToken: String?
    /// The portal's PipeWire connection for this session (only its nodes are visible through it).
    private let pipewire: Int32

    /// Opens a session sharing every monitor the person chooses (or the ones `restoreToken`
    /// remembers). `approvalTimeout`: how long a dialog may wait for an answer.
    public init(bus: SessionBus, restoreToken: String?, cursor: Cursor, approvalTimeout: Duration) throws(SessionBus.Failure) {
        self.bus = bus
        let created = try DesktopPortal.request(bus, interface: Self.interface, method: "CreateSession",
                                                options: [("session_handle_token", .string(DesktopPortal.token()))], timeout: .seconds(10))
        guard let session = created["session_handle"]?.string else {
            throw SessionBus.Failure(name: DesktopPortal.failed, message: "ScreenCast.CreateSession gave no session")
        }
        sessionHandle = session
        var started = false
        defer { if !started { Self.close(bus, session) } }
        var select: [(String, DBusValue)] = [("types", .uint32(1)), ("multiple", .bool(true)), ("cursor_mode", .uint32(cursor.rawValue)),
                                             ("persist_mode", .uint32(2))]
        if let restoreToken { select.append(("restore_token", .string(restoreToken))) }
        _ = try DesktopPortal.request(bus, interface: Self.interface, method: "SelectSources", arguments: [.objectPath(session)],
                                      options: select, timeout: .seconds(10))
        let start = try DesktopPortal.request(bus, interface: Self.interface, method: "Start", arguments: [.objectPath(session), .string("")],
                                              options: [], timeout: approvalTimeout)
        monitors = (start["streams"]?.elements ?? []).compactMap { stream -> Monitor? in
            let f = stream.fields
            guard f.count == 2, let node = f[0].int, let nodeId = UInt32(exactly: node) else { return nil }
            let position = f[1]["position"]?.fields.compactMap(\.int) ?? []
            let size = f[1]["size"]?.fields.compactMap(\.int) ?? []
            return Monitor(nodeId: nodeId, x: position.first ?? 0, y: position.count > 1 ? position[1] : 0,
                           width: size.first ?? 0, height: size.count > 1 ? size[1] : 0)
        }.sorted { ($0.x, $0.y, $0.nodeId) < ($1.x, $1.y, $1.nodeId) }
        guard !monitors.isEmpty else { throw SessionBus.Failure(name: DesktopPortal.failed, message: "ScreenCast.Start shared no monitor") }
        self.restoreToken = start["restore_token"]?.string
        let remote = try bus.call(DesktopPortal.service, DesktopPortal.objectPath, Self.interface, "OpenPipeWireRemote",
                                  [.objectPath(session), .options([])])
        guard case .fd(let fd) = remote.first, fd >= 0 else {
            throw SessionBus.Failure(name: DesktopPortal.failed, message: "ScreenCast.OpenPipeWireRemote gave no PipeWire connection")
        }
        pipewire = fd
        started = true
    }

    /// A stream of the monitor at `index` (one of `monitors`).
    public func stream(_ index: Int, name: String) throws(PipeWireStream.Failure) -> PipeWireStream {
        // PipeWire takes over the fd it is given: each stream gets a duplicate.
        let fd = fcntl(pipewire, F_DUPFD_CLOEXEC, 3)
        guard fd >= 0 else { throw PipeWireStream.Failure("cannot share the portal's PipeWire connection: \(String(cString: strerror(errno)))") }
        return try PipeWireStream(nodeId: monitors[index].nodeId, remote: .fd(fd), name: name)
    }

    /// Whether the portal on `bus` offers screen casts (its version), nil when it does not.
    public static func version(on bus: SessionBus) -> Int? { DesktopPortal.version(of: interface, on: bus) }

    private static func close(_ bus: SessionBus, _ session: String) {
        _ = try? bus.call(DesktopPortal.service, session, "org.freedesktop.portal.Session", "Close", timeout: .seconds(2))
    }

    deinit {
        Glibc.close(pipewire)
        Self.close(bus, sessionHandle)
    }
}
