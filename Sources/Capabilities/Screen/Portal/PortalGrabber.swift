import DesktopSession
import Kit
import Media
import Support

/// Captures one monitor through the desktop portal's screen cast (PortalScreenCast), for a GNOME
/// whose Mutter refuses the node or a sandbox that hides it. The first cast asks the person at
/// the desktop once; its restore token is kept (PortalApproval), so later casts, in this process
/// or after a restart, start without asking. Frames come as with Mutter's own cast: on change only,
/// the last one repeated for a still screen.
final class PortalGrabber: ScreenGrabber {
    /// How long the portal's dialog may wait for the person at the desktop.
    static let approvalTimeout: Duration = .seconds(60)

    let bus: SessionBus
    private let approval: PortalApproval
    private let screenIndex: Int
    private var cast: PortalScreenCast?
    private var stream: PipeWireStream?
    private var castCursor: PortalScreenCast.Cursor?

    /// Opens the cast at once (asking the person when no approval is kept): which monitors are
    /// shared, and so what screenIndex means, is known only from a running cast.
    init(bus: SessionBus, approval: PortalApproval, screenIndex: Int) throws(NodeError) {
        self.bus = bus
        self.approval = approval
        self.screenIndex = screenIndex
        try open(cursor: .embedded)
    }

    var width: Int { stream?.size?.width ?? monitor?.width ?? 0 }
    var height: Int { stream?.size?.height ?? monitor?.height ?? 0 }
    var method: String { "portal-screencast" }
    private var monitor: PortalScreenCast.Monitor? { cast.flatMap { $0.monitors.indices.contains(screenIndex) ? $0.monitors[screenIndex] : nil } }

    func prepare(includePointer: Bool) throws(NodeError) {
        _ = try ready(includePointer: includePointer)
    }

    func grab<T>(includePointer: Bool, _ body: (PixelView) throws(NodeError) -> T) throws(NodeError) -> T {
        let stream = try ready(includePointer: includePointer)
        let result = try stream.withLatestFrame { (f: PipeWireFrame) throws(NodeError) -> T in
            try body(PixelView(f))
        }
        guard let result else { throw ScreenError.unavailable("the portal's screen cast sent no picture") }
        return result
    }

    /// The stream of this monitor with the pointer as asked, opened (or reopened) as needed, with a first frame.
    private func ready(includePointer: Bool) throws(NodeError) -> PipeWireStream {
        let cursor: PortalScreenCast.Cursor = includePointer ? .embedded : .hidden
        if cast == nil || castCursor != cursor || stream?.failure != nil { try open(cursor: cursor) }
        guard let stream else { throw ScreenError.unavailable("no portal screen cast") }
        do throws(PipeWireStream.Failure) {
            _ = try stream.waitForFrame(timeout: .seconds(5))
        } catch {
            self.stream = nil
            self.cast = nil
            throw ScreenError.unavailable("the portal's screen cast sent no picture: \(error.description)")
        }
        return stream
    }

    /// A new cast with the pointer as asked (the kept approval spares the person a second dialog).
    private func open(cursor: PortalScreenCast.Cursor) throws(NodeError) {
        stream = nil
        cast = nil
        let opened = try PortalScreen.open(bus, approval: approval, cursor: cursor)
        guard opened.monitors.indices.contains(screenIndex) else {
            throw NodeError.invalidRequest("screenIndex \(screenIndex) does not exist: the desktop portal shares \(opened.monitors.count) " +
                                           "monitor(s), the ones chosen when the screen share was approved (see `openclaw-node doctor`)")
        }
        do throws(PipeWireStream.Failure) {
            stream = try opened.stream(screenIndex, name: "openclaw-node portal \(screenIndex)")
        } catch {
            throw ScreenError.unavailable("the portal's screen cast could not be read: \(error.description)")
        }
        cast = opened
        castCursor = cursor
    }

    func watchChanges(includePointer: Bool) -> (any ScreenChangeWatch)? {
        GnomeFrameWatch { [weak self] in self?.stream.map { (ObjectIdentifier($0), $0.latestSequence) } }
    }

    func isStillValid(screenIndex: Int) -> Bool { screenIndex == self.screenIndex && stream?.failure == nil }

    /// The shared monitor's place and size as the portal gave them when the cast started.
    func liveIdentity(screenIndex: Int) -> String? {
        guard let monitor, screenIndex == self.screenIndex else { return nil }
        return "portal:\(screenIndex)@\(monitor.x),\(monitor.y):\(monitor.width)x\(monitor.height)"
    }
}

/// Opening a portal cast with the kept approval, and what the screen bundle says when it fails.
enum PortalScreen {
    /// A cast presenting the kept token (a refused token is forgotten and the person asked instead);
    /// the token the portal returns is kept for next time.
    static func open(_ bus: SessionBus, approval: PortalApproval, cursor: PortalScreenCast.Cursor) throws(NodeError) -> PortalScreenCast {
        let cast: PortalScreenCast
        do throws(SessionBus.Failure) {
            do throws(SessionBus.Failure) {
                cast = try PortalScreenCast(bus: bus, restoreToken: approval.token, cursor: cursor, approvalTimeout: PortalGrabber.approvalTimeout)
            } catch where error.name.hasSuffix("InvalidArgument") && approval.token != nil {
                approval.forget()
                cast = try PortalScreenCast(bus: bus, restoreToken: nil, cursor: cursor, approvalTimeout: PortalGrabber.approvalTimeout)
            }
        } catch {
            throw refused(error)
        }
        if let why = approval.keep(cast.restoreToken) { Logger(component: "screen").warn(why) }
        return cast
    }

    static func refused(_ error: SessionBus.Failure) -> NodeError {
        switch error.name {
        case DesktopPortal.declined:
            return ScreenError.unavailable("the person at this desktop declined to share the screen (the portal's Screen Share dialog)")
        case DesktopPortal.unanswered:
            return ScreenError.unavailable("the desktop portal asked the person at this desktop to share the screen and nobody answered within " +
                                           "\(PortalGrabber.approvalTimeout): answer its Screen Share dialog once, with \"Remember this selection\" " +
                                           "ticked, and later captures will not ask")
        default:
            return ScreenError.unavailable("the desktop portal could not share the screen: \(error.description)")
        }
    }
}
