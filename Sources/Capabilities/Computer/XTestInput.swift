import CXTest
import Glibc
import Kit
import Support
import X11Support

/// Pointer and keyboard input on one X display through XTest, as if from the core devices. One
/// instance per display, used under its lock from blocking threads (never the cooperative pool).
/// It remembers what it holds down, so an execution's end (or the daemon's) releases everything.
final class XTestInput {
    let name: String
    let display: OpaquePointer
    private(set) var heldKeys: [KeyCode] = []
    private(set) var heldButtons: [UInt32] = []
    /// Keycodes with no keysyms, borrowed to type characters the keymap lacks (as xdotool does),
    /// and what each is lent for. They stay mapped until the action ends and clients have had
    /// time to look the keys up: X clients read the keymap lazily, when they handle the key event.
    private var spareKeycodes: [KeyCode]?
    private var borrowed: [KeySym: KeyCode] = [:]
    var hasBorrowed: Bool { !borrowed.isEmpty }

    init(name: String) throws(NodeError) {
        guard let d = XOpenDisplay(name) else {
            throw NodeError(ComputerError.unavailable, "cannot connect to X display \(name): is the X server running, and may this user " +
                            "connect (DISPLAY/XAUTHORITY)? Set capabilities.computer.display to the right display")
        }
        var ev: Int32 = 0, err: Int32 = 0, major: Int32 = 0, minor: Int32 = 0
        guard XTestQueryExtension(d, &ev, &err, &major, &minor) != 0 else {
            XCloseDisplay(d)
            throw NodeError(ComputerError.unavailable, "X display \(name) has no XTEST extension, which input injection needs")
        }
        X11ErrorTrap.install()
        self.name = name
        display = d
    }

    deinit { XCloseDisplay(display) }

    // MARK: pointer

    func move(to target: X11Target, x: Int, y: Int) {
        XTestFakeMotionEvent(display, target.screen, Int32(target.x + x), Int32(target.y + y), cxtest_current_time())
        XFlush(display)
    }

    func button(_ b: UInt32, down: Bool) {
        XTestFakeButtonEvent(display, b, down ? 1 : 0, cxtest_current_time())
        if down { heldButtons.append(b) } else { heldButtons.removeAll { $0 == b } }
        XFlush(display)
    }

    // MARK: keyboard

    /// The keycode that produces `keysym`, and whether Shift is needed for it; a spare keycode
    /// mapped to it when the keymap has none (`newlyMapped` when this call lent it).
    func keycode(for keysym: KeySym) -> (code: KeyCode, shift: Bool, newlyMapped: Bool)? {
        let code = XKeysymToKeycode(display, keysym)
        if code != 0 {
            var per: Int32 = 0
            if let syms = XGetKeyboardMapping(display, code, 1, &per) {
                defer { XFree(syms) }
                if per > 0 && syms[0] == keysym { return (code, false, false) }
                if per > 1 && syms[1] == keysym { return (code, true, false) }
            }
            return (code, false, false)
        }
        if let code = borrowed[keysym] { return (code, false, false) }
        if spareKeycodes == nil { spareKeycodes = findSpareKeycodes() }
        let inUse = Set(borrowed.values)
        guard let spare = spareKeycodes?.first(where: { !inUse.contains($0) }) else { return nil }
        var syms: [KeySym] = [keysym, keysym]
        XChangeKeyboardMapping(display, Int32(spare), 2, &syms, 1)
        XSync(display, 0)
        borrowed[keysym] = spare
        return (spare, false, true)
    }

    private func findSpareKeycodes() -> [KeyCode] {
        var minCode: Int32 = 0, maxCode: Int32 = 0
        XDisplayKeycodes(display, &minCode, &maxCode)
        var per: Int32 = 0
        guard let syms = XGetKeyboardMapping(display, KeyCode(minCode), maxCode - minCode + 1, &per) else { return [] }
        defer { XFree(syms) }
        // From the top: low keycodes are the physical keyboard's.
        return stride(from: maxCode, through: minCode, by: -1).filter { code in
            let base = Int(code - minCode) * Int(per)
            return (0..<Int(per)).allSatisfy { syms[base + $0] == 0 }
        }.map { KeyCode($0) }
    }

    /// Gives the borrowed keycodes back (no keysyms), after `graceMs` for clients to read them.
    func restoreSpares(graceMs: UInt32 = 150) {
        guard !borrowed.isEmpty else { return }
        XSync(display, 0)
        // A grace, not polling: other clients (the focused application) read the borrowed keysyms
        // when they handle the key event, and nothing tells us when they have; XSync only says our
        // own requests are done.
        Pause.for(.milliseconds(Int(graceMs)))  // restored whether or not the pause was cut short
        var none: [KeySym] = [0, 0]
        for code in borrowed.values { XChangeKeyboardMapping(display, Int32(code), 2, &none, 1) }
        borrowed.removeAll()
        XSync(display, 0)
    }

    func key(_ code: KeyCode, down: Bool) {
        XTestFakeKeyEvent(display, UInt32(code), down ? 1 : 0, cxtest_current_time())
        if down { heldKeys.append(code) } else { heldKeys.removeAll { $0 == code } }
        XFlush(display)
    }

    /// Presses and releases `keysym` (with Shift when the keymap puts it on the shifted level).
    func tap(_ keysym: KeySym) -> Bool {
        guard let k = keycode(for: keysym) else { return false }
        let shift = k.shift ? keycode(for: KeySym(XK_Shift_L))?.code : nil
        if let shift { key(shift, down: true) }
        key(k.code, down: true)
        key(k.code, down: false)
        if let shift { key(shift, down: false) }
        return true
    }

    /// Releases every key and button this instance holds down (end of an execution, shutdown).
    func releaseAll() {
        for b in heldButtons.reversed() { button(b, down: false) }
        for k in heldKeys.reversed() { key(k, down: false) }
        restoreSpares(graceMs: 0)
        XSync(display, 0)
    }

    func sync() { XSync(display, 0) }
}
