import DesktopSession
import Kit
import Media
import Support

/// Captures one GNOME monitor through Mutter's screen cast (MutterScreenCast): the first frame
/// when the cast opens, then whatever Mutter sent last. Mutter sends frames only when the monitor
/// changes, so a still screen is one frame repeated, which is what a recording needs.
final class GnomeGrabber: ScreenGrabber {
    let bus: SessionBus
    private let pipewire: PipeWireRemote
    private let monitor: MutterMonitor
    private var cast: MutterScreenCast?
    private var castCursor: MutterScreenCast.Cursor?

    init(bus: SessionBus, pipewire: PipeWireRemote, screenIndex: Int) throws(NodeError) {
        self.bus = bus
        self.pipewire = pipewire
        let monitors = try GnomeScreen.monitors(bus)
        guard monitors.indices.contains(screenIndex) else {
            throw NodeError.invalidRequest("screenIndex \(screenIndex) does not exist: GNOME has \(monitors.count) monitor(s) " +
                                           "(\(monitors.map(\.connector).joined(separator: ", ")))")
        }
        monitor = monitors[screenIndex]
    }

    var width: Int { cast?.stream.size?.width ?? monitor.width }
    var height: Int { cast?.stream.size?.height ?? monitor.height }
    var method: String { "mutter-screencast" }

    func prepare(includePointer: Bool) throws(NodeError) {
        _ = try ready(includePointer: includePointer)
    }

    func grab<T>(includePointer: Bool, _ body: (PixelView) throws(NodeError) -> T) throws(NodeError) -> T {
        let cast = try ready(includePointer: includePointer)
        let result = try cast.stream.withLatestFrame { (f: PipeWireFrame) throws(NodeError) -> T in
            try body(PixelView(f))
        }
        guard let result else { throw ScreenError.unavailable("GNOME's screen cast of \(monitor.connector) sent no picture") }
        return result
    }

    /// The cast with the pointer as asked, opened (or reopened) as needed, with a first frame.
    private func ready(includePointer: Bool) throws(NodeError) -> MutterScreenCast {
        let cursor: MutterScreenCast.Cursor = includePointer ? .embedded : .hidden
        if cast == nil || castCursor != cursor {
            cast = nil
            do throws(SessionBus.Failure) {
                cast = try MutterScreenCast(bus: bus, pipewire: pipewire, monitor: monitor, cursor: cursor)
                castCursor = cursor
            } catch {
                throw GnomeScreen.refused(error, what: "a screen cast of \(monitor.connector)")
            }
        }
        guard let cast else { throw ScreenError.unavailable("no screen cast of \(monitor.connector)") }
        do throws(PipeWireStream.Failure) {
            _ = try cast.stream.waitForFrame(timeout: .seconds(5))
        } catch {
            self.cast = nil
            throw ScreenError.unavailable("GNOME's screen cast of \(monitor.connector) sent no picture: \(error.description)")
        }
        return cast
    }

    func watchChanges(includePointer: Bool) -> (any ScreenChangeWatch)? {
        GnomeFrameWatch { [weak self] in self?.cast.map { (ObjectIdentifier($0), $0.stream.latestSequence) } }
    }

    func isStillValid(screenIndex: Int) -> Bool {
        guard let monitors = try? MutterDisplays.monitors(bus), monitors.indices.contains(screenIndex) else { return false }
        return monitors[screenIndex] == monitor
    }

    func liveIdentity(screenIndex: Int) -> String? {
        guard let monitors = try? MutterDisplays.monitors(bus), monitors.indices.contains(screenIndex) else { return nil }
        return monitors[screenIndex].identity
    }
}

extension PixelView {
    /// A PipeWire screen-cast frame's pixels, in place (Mutter's and the portal's casts).
    init(_ f: PipeWireFrame) {
        self.init(base: f.base, width: f.width, height: f.height, bytesPerRow: f.bytesPerRow, layout: f.order == .bgrx ? .bgrx : .rgbx)
    }
}

/// What the GNOME backend says when GNOME is not there or refuses.
enum GnomeScreen {
    /// GNOME's monitors, or why they cannot be had.
    static func monitors(_ bus: SessionBus) throws(NodeError) -> [MutterMonitor] {
        let monitors: [MutterMonitor]
        do throws(SessionBus.Failure) { monitors = try MutterDisplays.monitors(bus) } catch {
            throw refused(error, what: "GNOME's monitor list")
        }
        guard !monitors.isEmpty else { throw ScreenError.unavailable("GNOME reports no monitor (is the screen off or the session locked?)") }
        return monitors
    }

    /// A refusal in words: access denied means a GNOME that closed Mutter's API to other programs.
    static func refused(_ error: SessionBus.Failure, what: String) -> NodeError {
        if error.name.hasSuffix("AccessDenied") {
            return ScreenError.unavailable("GNOME refused \(what) (\(error.message)): this GNOME lets only its own programs use Mutter's " +
                                           "screen cast; run `openclaw-node doctor` for what to do")
        }
        if error.name.hasSuffix("ServiceUnknown") || error.name.hasSuffix("NameHasNoOwner") {
            return ScreenError.unavailable("GNOME's Mutter is not on the session bus at \(MutterScreenCast.service): is this a GNOME session, " +
                                           "and does the service have the session's DBUS_SESSION_BUS_ADDRESS?")
        }
        return ScreenError.unavailable("GNOME could not give \(what): \(error.description)")
    }
}
