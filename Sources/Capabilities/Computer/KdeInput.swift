import CXTest
import Glibc
import Kit
import Support
import WaylandSupport

/// computer.act's input on KDE Plasma through KWin's fake input (KWinFakeInput). Keys are Linux
/// key codes, so what is typed key by key is what a US keyboard layout types (the protocol takes
/// no keymap); the rest of a text is pasted: it becomes the clipboard's content (data control,
/// WaylandClipboard) and Ctrl+V is pressed, as on GNOME.
final class KdeInput: ComputerInput {
    private let input: KWinFakeInput
    private var connection: WaylandConnection { input.connection }
    /// Opened on the first paste.
    private var clipboard: WaylandClipboard?
    private(set) var heldButtons: [UInt32] = []
    private var heldKeys: [UInt32] = []
    var backendName: String { "KWin's fake input on the compositor at \(connection.socket)" }

    init(socket: String) throws(NodeError) {
        input = try KWinFakeInput(socket: socket, purpose: "computer control for OpenClaw agents", unavailableCode: ComputerError.unavailable)
    }

    deinit { releaseAll() }

    func target(screenIndex: Int) throws(NodeError) -> InputTarget { try connection.inputTarget(screenIndex: screenIndex) }

    func move(to target: InputTarget, x: Int, y: Int) throws(NodeError) {
        guard let o = target.handle as? WaylandConnection.Output else { throw NodeError.invalidRequest("not a Wayland target") }
        try input.move(on: o, x: x, y: y)
    }

    /// Linux input button codes: BTN_LEFT, BTN_MIDDLE, BTN_RIGHT.
    private static func code(_ b: UInt32) -> UInt32 { b == 3 ? 0x111 : b == 2 ? 0x112 : 0x110 }

    func button(_ b: UInt32, down: Bool) {
        input.button(Self.code(b), down: down)
        if down { heldButtons.append(b) } else { heldButtons.removeAll { $0 == b } }
        sync()
    }

    func scroll(_ direction: String, amount: Int, stop: CancelFlag) {
        let axis: UInt32 = direction == "left" || direction == "right" ? 1 : 0
        let sign: Int32 = direction == "up" || direction == "left" ? -1 : 1
        for _ in 0..<max(1, amount) {
            input.scroll(axis: axis, notches: sign)
            sync()
            if !stop.sleep(milliseconds: 20) { return }
        }
    }

    private func key(_ code: UInt32, down: Bool) {
        input.key(code, down: down)
        if down { heldKeys.append(code) } else { heldKeys.removeAll { $0 == code } }
    }

    private func keyCode(_ keysym: KeySym) throws(NodeError) -> (code: UInt32, shift: Bool) {
        guard let k = USKeyCodes.code(for: UInt32(truncatingIfNeeded: keysym)) else {
            let name = XKeysymToString(keysym).map { String(cString: $0) } ?? "0x" + UInt32(truncatingIfNeeded: keysym).hex()
            throw NodeError.invalidRequest("KWin's fake input types only what a US keyboard layout has: no key for \(name)")
        }
        return k
    }

    func modifiers(_ mods: [KeySym], down: Bool) throws(NodeError) {
        for m in down ? mods : mods.reversed() { key(try keyCode(m).code, down: down) }
        sync()
    }

    func type(_ text: String, stop: CancelFlag) throws(NodeError) {
        let runs = TypingRuns.split(text)
        if runs.contains(where: { if case .paste = $0 { return true } else { return false } }), clipboard == nil {
            guard let c = WaylandClipboard(connection: connection) else {
                throw NodeError.invalidRequest("KWin's fake input types only what a US keyboard layout has, and the compositor at " +
                                               "\(connection.socket) offers no clipboard (data control) to paste the rest through")
            }
            clipboard = c
        }
        for run in runs {
            switch run {
            case .keys(let scalars):
                for c in scalars {
                    let k = try keyCode(KeyNames.keysym(for: c))
                    if k.shift { key(USKeyCodes.leftShift, down: true) }
                    key(k.code, down: true)
                    key(k.code, down: false)
                    if k.shift { key(USKeyCodes.leftShift, down: false) }
                    sync()
                    if !stop.sleep(milliseconds: 4) { return }
                }
            case .paste(let chunk):
                try paste(chunk, stop: stop)
            }
            if stop.isCancelled { return }
        }
    }

    /// `text` through the clipboard: set, Ctrl+V, then served to the program that pastes. The
    /// program reads the text after it asked for it, and keys sent meanwhile could overtake it:
    /// the next part waits until nobody asked for 300 ms (no event says a paste is complete).
    private func paste(_ text: String, stop: CancelFlag) throws(NodeError) {
        guard let clipboard else { return }
        try clipboard.set(text)
        let before = clipboard.timesServed
        let control = try keyCode(KeySym(XK_Control_L)).code, v = try keyCode(KeySym(XK_v)).code
        key(control, down: true); key(v, down: true); key(v, down: false); key(control, down: false)
        sync()
        do throws(NodeError) {
            try connection.wait(until: { clipboard.timesServed > before || stop.isCancelled }, timeout: .seconds(2), what: "paste")
        } catch {
            throw NodeError(ComputerError.driverError, "could not paste \"\(text.prefix(20))…\": the focused program did not read the clipboard " +
                            "after Ctrl+V within 2 s (text outside a US layout is pasted on KDE)")
        }
        var served = clipboard.timesServed
        while !stop.isCancelled {
            do throws(NodeError) { try connection.wait(until: { clipboard.timesServed > served }, timeout: .milliseconds(300), what: "paste") }
            catch { break }
            served = clipboard.timesServed
        }
    }

    func combo(_ mods: [KeySym], key keysym: KeySym, hold: (() -> Void)?) throws(NodeError) {
        let codes = try mods.map { (m: KeySym) throws(NodeError) -> UInt32 in try keyCode(m).code }
        let k = try keyCode(keysym)
        let withShift = k.shift && !codes.contains(USKeyCodes.leftShift)
        for c in codes { key(c, down: true) }
        if withShift { key(USKeyCodes.leftShift, down: true) }
        key(k.code, down: true)
        sync()
        hold?()
        key(k.code, down: false)
        if withShift { key(USKeyCodes.leftShift, down: false) }
        for c in codes.reversed() { key(c, down: false) }
        sync()
    }

    func releaseAll() {
        for b in heldButtons.reversed() { input.button(Self.code(b), down: false) }
        heldButtons.removeAll()
        for k in heldKeys.reversed() { input.key(k, down: false) }
        heldKeys.removeAll()
        sync()
    }

    func sync() { input.flush() }
}
