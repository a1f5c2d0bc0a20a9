import Glibc
import Kit
import Support

/// Input into a GNOME session through Mutter's own API (org.gnome.Mutter.RemoteDesktop, what
/// gnome-remote-desktop uses): no portal and no dialog. A RemoteDesktop session with one screen
/// cast per monitor, because absolute pointer motion is given in a cast stream's pixels; started
/// here, stopped when this is dropped (GNOME shows its sharing indicator meanwhile).
public final class MutterRemoteDesktop {
    public static let service = "org.gnome.Mutter.RemoteDesktop"
    private static let sessionInterface = service + ".Session"

    public let bus: SessionBus
    public let sessionPath: String
    /// The cast stream of each monitor, by connector.
    public let streams: [String: String]
    /// The PipeWire node of each monitor's cast, by connector (its frames, for a viewer).
    public let nodes: [String: UInt32]
    private let castSession: String

    /// `cursor`: hidden when only input is wanted; embedded when the casts' frames are shown to
    /// someone (desktop.stream).
    public init(bus: SessionBus, monitors: [MutterMonitor], cursor: MutterScreenCast.Cursor = .hidden,
                timeout: Duration = .seconds(5)) throws(SessionBus.Failure) {
        self.bus = bus
        let created = try bus.call(Self.service, "/org/gnome/Mutter/RemoteDesktop", Self.service, "CreateSession")
        guard let path = created.first?.string else { throw SessionBus.Failure(name: "reply", message: "RemoteDesktop.CreateSession returned no session") }
        sessionPath = path
        var started = false
        defer { if !started { _ = try? bus.call(Self.service, path, Self.sessionInterface, "Stop", timeout: .seconds(2)) } }
        let id = try bus.call(Self.service, path, "org.freedesktop.DBus.Properties", "Get", [.string(Self.sessionInterface), .string("SessionId")])
        guard let sessionId = id.first?.string else { throw SessionBus.Failure(name: "reply", message: "the RemoteDesktop session has no SessionId") }
        let cast = try bus.call(MutterScreenCast.service, "/org/gnome/Mutter/ScreenCast", MutterScreenCast.service, "CreateSession",
                                [.options([("remote-desktop-session-id", .string(sessionId))])])
        guard let castPath = cast.first?.string else { throw SessionBus.Failure(name: "reply", message: "ScreenCast.CreateSession returned no session") }
        castSession = castPath
        var streams: [String: String] = [:]
        var added: [(connector: String, signal: SessionBus.Subscription)] = []
        for m in monitors {
            let recorded = try bus.call(MutterScreenCast.service, castPath, MutterScreenCast.service + ".Session", "RecordMonitor",
                                        [.string(m.connector), .options([("cursor-mode", .uint32(cursor.rawValue))])])
            guard let stream = recorded.first?.string else { throw SessionBus.Failure(name: "reply", message: "RecordMonitor returned no stream") }
            streams[m.connector] = stream
            added.append((m.connector, try bus.subscribe(path: stream, interface: MutterScreenCast.service + ".Stream", member: "PipeWireStreamAdded")))
        }
        self.streams = streams
        try bus.call(Self.service, path, Self.sessionInterface, "Start")
        // Motion is placed through the streams: they exist once Mutter announced them.
        var nodes: [String: UInt32] = [:]
        for a in added {
            let signal = try bus.next(a.signal, timeout: timeout)
            nodes[a.connector] = signal.first?.int.flatMap { UInt32(exactly: $0) }
        }
        self.nodes = nodes
        started = true
        // Mutter makes its virtual devices on first use and drops that first event: a Shift
        // press and release and a pointer nudge there and back, then a moment, so the caller's
        // first key and first click arrive.
        try keysym(0xFFE1, down: true)
        try keysym(0xFFE1, down: false)
        try notify("NotifyPointerMotionRelative", [.double(1), .double(0)])
        try notify("NotifyPointerMotionRelative", [.double(-1), .double(0)])
        Pause.for(.milliseconds(300))
    }

    deinit {
        _ = try? bus.call(Self.service, sessionPath, Self.sessionInterface, "Stop", timeout: .seconds(2))
    }

    private func notify(_ member: String, _ args: [DBusValue]) throws(SessionBus.Failure) {
        guard member.hasPrefix("NotifyPointer") || member.hasPrefix("NotifyKeyboard") else {
            try bus.call(Self.service, sessionPath, Self.sessionInterface, member, args)
            return
        }
        let sent = InjectedInput.nowMs()
        try bus.call(Self.service, sessionPath, Self.sessionInterface, member, args)
        InjectedInput.record(sent: sent, registered: InjectedInput.tracking ? confirmed(after: sent) : InjectedInput.nowMs())
    }

    /// Mutter answers an input call before its compositor loop handles the event (a frame later,
    /// longer on a busy machine): waits (≤ 500 ms) until the idle monitor shows activity from
    /// `sent` on, and returns the latest time that activity can have (the idle time is measured
    /// somewhere inside the call that asks for it: after the call, minus it), so presence can
    /// tell this event's time from a person's.
    private func confirmed(after sent: UInt64) -> UInt64 {
        while true {
            let before = InjectedInput.nowMs()
            let reply = try? bus.call(GnomePresenceSource.service, "/org/gnome/Mutter/IdleMonitor/Core", GnomePresenceSource.service,
                                      "GetIdletime", timeout: .seconds(1))
            let after = InjectedInput.nowMs()
            // Registered for sure when even the earliest time the activity can have is from `sent` on.
            if let idle = reply?.first?.int.map(UInt64.init), before >= idle, before - idle + 2 >= sent {
                return after - min(after, idle)
            }
            // No signal says Mutter handled it: its idle time is asked again shortly.
            if after > sent + 500 || !Pause.for(.milliseconds(2)) { return after }
        }
    }

    /// Moves the pointer to (x, y) in the pixels of `connector`'s monitor.
    public func move(connector: String, x: Double, y: Double) throws(SessionBus.Failure) {
        guard let stream = streams[connector] else { throw SessionBus.Failure(name: "monitor", message: "no stream for monitor \(connector)") }
        try notify("NotifyPointerMotionAbsolute", [.string(stream), .double(x), .double(y)])
    }

    /// A Linux input button code (BTN_LEFT 0x110 …) pressed or released.
    public func button(_ code: Int32, down: Bool) throws(SessionBus.Failure) {
        try notify("NotifyPointerButton", [.int32(code), .bool(down)])
    }

    /// Wheel notches: axis 0 vertical, 1 horizontal; positive steps down or right.
    public func scroll(axis: UInt32, steps: Int32) throws(SessionBus.Failure) {
        try notify("NotifyPointerAxisDiscrete", [.uint32(axis), .int32(steps)])
    }

    /// An X keysym pressed or released (only what the session's keyboard layout has arrives).
    public func keysym(_ keysym: UInt32, down: Bool) throws(SessionBus.Failure) {
        try notify("NotifyKeyboardKeysym", [.uint32(keysym), .bool(down)])
    }

    /// Offers `text` as the session's clipboard and answers whoever reads it: `paste` sends the
    /// keys that make the focused application read it (Ctrl+V). Text outside the keyboard layout
    /// reaches applications only this way. GNOME's own clipboard manager reads a new selection at
    /// once (to keep it after its owner leaves); the keys go only after that, so the application
    /// reads the new text, not the old. Every read is answered until a quiet moment.
    public func paste(_ text: String, timeout: Duration = .seconds(2), paste: () throws(SessionBus.Failure) -> Void) throws(SessionBus.Failure) {
        let transfer = try bus.subscribe(path: sessionPath, interface: Self.sessionInterface, member: "SelectionTransfer")
        try notify("EnableClipboard", [.options([])])
        defer { _ = try? notify("DisableClipboard", []) }
        try notify("SetSelection", [.options([("mime-types", .array("s", [.string("text/plain;charset=utf-8"), .string("text/plain"),
                                                                           .string("UTF8_STRING"), .string("STRING"), .string("TEXT")]))])])
        let bytes = Array(text.utf8)
        var answered = try serve(transfer, bytes, quiet: timeout, firstOnly: true)
        try paste()
        answered += try serve(transfer, bytes, quiet: .milliseconds(500), firstOnly: false)
        guard answered > 0 else {
            throw SessionBus.Failure(name: "timeout", message: "nothing read the clipboard within \(timeout)")
        }
    }

    /// Answers SelectionTransfer requests until none came for `quiet` (or after the first one).
    private func serve(_ transfer: SessionBus.Subscription, _ bytes: [UInt8], quiet: Duration, firstOnly: Bool) throws(SessionBus.Failure) -> Int {
        var answered = 0
        while true {
            let asked: [DBusValue]
            do throws(SessionBus.Failure) { asked = try bus.next(transfer, timeout: quiet) } catch {
                if error.name == "timeout" { return answered }
                throw error
            }
            guard asked.count >= 2, let serial = asked[1].int, let s = UInt32(exactly: serial) else { continue }
            let written = try bus.call(Self.service, sessionPath, Self.sessionInterface, "SelectionWrite", [.uint32(s)])
            guard case .fd(let fd)? = written.first, fd >= 0 else {
                _ = try? notify("SelectionWriteDone", [.uint32(s), .bool(false)])
                throw SessionBus.Failure(name: "reply", message: "SelectionWrite gave no fd")
            }
            let ok = (try? FileDescriptor(owning: fd).writeAll(bytes)) != nil  // and closed, once
            try notify("SelectionWriteDone", [.uint32(s), .bool(ok)])
            answered += 1
            if firstOnly { return answered }
        }
    }
}
