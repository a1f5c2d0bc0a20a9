import CXTest
import DesktopSession
import Glibc
import Kit
import Support

/// computer.act's input on GNOME through Mutter's RemoteDesktop API (MutterRemoteDesktop): the
/// pointer placed in a monitor's own pixels, buttons, wheel notches and keysyms. Mutter types only
/// the keysyms of the session's keyboard layout, so text outside printable ASCII is pasted through
/// the session's clipboard (Ctrl+V) instead. The RemoteDesktop session opens on first use and
/// closes when the execution ends (releaseAll), so GNOME's sharing indicator shows only meanwhile.
final class GnomeInput: ComputerInput {
    var backendName: String { "GNOME's Mutter RemoteDesktop" }
    private let bus: SessionBus
    private var session: MutterRemoteDesktop?
    private(set) var heldButtons: [UInt32] = []
    private var heldKeys: [UInt32] = []

    init(bus: SessionBus) throws(NodeError) {
        guard bus.hasOwner(MutterRemoteDesktop.service) else {
            throw NodeError(ComputerError.unavailable, "nothing on the session bus offers \(MutterRemoteDesktop.service): this is not a GNOME session")
        }
        self.bus = bus
    }

    deinit { releaseAll() }

    private static func failed(_ e: SessionBus.Failure) -> NodeError {
        if e.name.hasSuffix("AccessDenied") {
            return NodeError(ComputerError.unavailable, "GNOME refused remote input (\(e.message)): this GNOME lets only its own programs use " +
                             "Mutter's RemoteDesktop; run `openclaw-node doctor` for what to do")
        }
        return NodeError(ComputerError.driverError, "GNOME's RemoteDesktop: \(e.description)")
    }

    private func monitors() throws(NodeError) -> [MutterMonitor] {
        do throws(SessionBus.Failure) { return try MutterDisplays.monitors(bus) } catch { throw Self.failed(error) }
    }

    /// The open session, covering every monitor there is now (reopened when they changed).
    private func live(for monitor: MutterMonitor) throws(NodeError) -> MutterRemoteDesktop {
        if let s = session, s.streams[monitor.connector] != nil { return s }
        session = nil
        let all = try monitors()
        do throws(SessionBus.Failure) {
            let s = try MutterRemoteDesktop(bus: bus, monitors: all)
            session = s
            return s
        } catch { throw Self.failed(error) }
    }

    /// The session for keys and buttons (any monitor's will do).
    private func anySession() throws(NodeError) -> MutterRemoteDesktop {
        if let s = session { return s }
        guard let first = try monitors().first else { throw NodeError(ComputerError.unavailable, "GNOME reports no monitor") }
        return try live(for: first)
    }

    func target(screenIndex: Int) throws(NodeError) -> InputTarget {
        let all = try monitors()
        guard all.indices.contains(screenIndex) else {
            throw NodeError.invalidRequest("screenIndex \(screenIndex) does not exist: GNOME has \(all.count) monitor(s)")
        }
        let m = all[screenIndex]
        return InputTarget(identity: m.identity, width: m.width, height: m.height, label: m.connector, handle: m)
    }

    func move(to target: InputTarget, x: Int, y: Int) throws(NodeError) {
        guard let m = target.handle as? MutterMonitor else { throw NodeError.invalidRequest("not a GNOME target") }
        let s = try live(for: m)
        do throws(SessionBus.Failure) { try s.move(connector: m.connector, x: Double(x), y: Double(y)) } catch { throw Self.failed(error) }
    }

    /// Linux input button codes: BTN_LEFT, BTN_RIGHT, BTN_MIDDLE.
    private static func code(_ b: UInt32) -> Int32 { b == 3 ? 0x111 : b == 2 ? 0x112 : 0x110 }

    func button(_ b: UInt32, down: Bool) {
        guard let s = try? anySession() else { return }
        guard (try? s.button(Self.code(b), down: down)) != nil else { return }
        if down { heldButtons.append(b) } else { heldButtons.removeAll { $0 == b } }
    }

    func scroll(_ direction: String, amount: Int, stop: CancelFlag) {
        guard let s = try? anySession() else { return }
        let axis: UInt32 = direction == "left" || direction == "right" ? 1 : 0
        let step: Int32 = direction == "up" || direction == "left" ? -1 : 1
        for _ in 0..<max(1, amount) {
            guard (try? s.scroll(axis: axis, steps: step)) != nil else { return }
            if !stop.sleep(milliseconds: 20) { return }  // one notch per 20 ms, as a wheel gives them
        }
    }

    private func key(_ s: MutterRemoteDesktop, _ keysym: KeySym, down: Bool) throws(NodeError) {
        let sym = UInt32(truncatingIfNeeded: keysym)
        do throws(SessionBus.Failure) { try s.keysym(sym, down: down) } catch { throw Self.failed(error) }
        if down { heldKeys.append(sym) } else { heldKeys.removeAll { $0 == sym } }
    }

    func modifiers(_ mods: [KeySym], down: Bool) throws(NodeError) {
        let s = try anySession()
        for m in down ? mods : mods.reversed() { try key(s, m, down: down) }
    }

    func type(_ text: String, stop: CancelFlag) throws(NodeError) {
        let s = try anySession()
        for run in TypingRuns.split(text) {
            if stop.isCancelled { return }
            switch run {
            case .keys(let scalars):
                for c in scalars {
                    let sym = KeyNames.keysym(for: c)
                    try key(s, sym, down: true)
                    try key(s, sym, down: false)
                    if !stop.sleep(milliseconds: 4) { return }
                }
            case .paste(let chunk):
                do throws(SessionBus.Failure) {
                    try s.paste(chunk) { () throws(SessionBus.Failure) in
                        try s.keysym(UInt32(XK_Control_L), down: true)
                        try s.keysym(UInt32(XK_v), down: true)
                        try s.keysym(UInt32(XK_v), down: false)
                        try s.keysym(UInt32(XK_Control_L), down: false)
                    }
                } catch {
                    throw NodeError(ComputerError.driverError, "could not paste \"\(chunk.prefix(20))…\" through GNOME's clipboard " +
                                    "(text outside the keyboard layout is pasted with Ctrl+V): \(error.description)")
                }
            }
        }
    }

    func combo(_ mods: [KeySym], key keysym: KeySym, hold: (() -> Void)?) throws(NodeError) {
        let s = try anySession()
        for m in mods { try key(s, m, down: true) }
        try key(s, keysym, down: true)
        hold?()
        try key(s, keysym, down: false)
        for m in mods.reversed() { try key(s, m, down: false) }
    }

    /// Lets go of everything and closes the session (the end of an execution).
    func releaseAll() {
        if let s = session {
            for b in heldButtons.reversed() { _ = try? s.button(Self.code(b), down: false) }
            for k in heldKeys.reversed() { _ = try? s.keysym(k, down: false) }
        }
        heldButtons.removeAll()
        heldKeys.removeAll()
        session = nil
    }

    func sync() {}
}
