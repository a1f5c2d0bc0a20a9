import CXTest
import Glibc
import Kit
import Support
import X11Support

/// computer.act's input on an X11 display (XTest): keys the keymap lacks are lent spare keycodes
/// for the duration of the action.
extension XTestInput: ComputerInput {
    var backendName: String { "XTest on the X display \(name)" }
    func target(screenIndex: Int) throws(NodeError) -> InputTarget {
        let t = try X11Targets.target(screenIndex, on: display, name: name)
        return InputTarget(identity: t.identity(display: name), width: t.width, height: t.height, label: t.label, handle: t)
    }

    func move(to target: InputTarget, x: Int, y: Int) throws(NodeError) {
        guard let t = target.handle as? X11Target else { throw NodeError.invalidRequest("not an X11 target") }
        move(to: t, x: x, y: y)
    }

    func scroll(_ direction: String, amount: Int, stop: CancelFlag) {
        click(["up": 4, "down": 5, "left": 6, "right": 7][direction] ?? 5, count: amount, stop: stop)
    }

    func modifiers(_ mods: [KeySym], down: Bool) throws(NodeError) {
        for m in down ? mods : mods.reversed() {
            guard let k = keycode(for: m) else { throw NodeError(ComputerError.unsupportedKey, "the keymap has no key for a modifier") }
            key(k.code, down: down)
        }
        sync()
    }

    func type(_ text: String, stop: CancelFlag) throws(NodeError) {
        let syms = text.unicodeScalars.map { KeyNames.keysym(for: $0) }
        var i = 0
        while i < syms.count {
            // Lend keycodes for the characters ahead first, then give clients a moment to read
            // the new keymap before any of those keys arrive: a client that looks the keymap up
            // later than the key (Chromium does) would otherwise miss the character.
            var end = i, lent = false
            while end < syms.count, let k = keycode(for: syms[end]) { lent = lent || k.newlyMapped; end += 1 }
            guard end > i else {
                throw NodeError(ComputerError.driverError, "cannot type U+\(text.unicodeScalars.map(\.value)[i].upperHex(4)): the keymap has no free keycode to map it to")
            }
            // Pauses for the clients (no event says they have read the keymap) and between keys
            // (pacing); each ends at once when `stop` is raised, and typing stops there.
            if lent { sync(); if !stop.sleep(milliseconds: 100) { break } }
            for s in syms[i..<end] {
                _ = tap(s)
                if !stop.sleep(milliseconds: 3) { break }
            }
            if stop.isCancelled { break }
            i = end
            // Every spare keycode is lent out: let clients read them, give them back, go on.
            if i < syms.count { restoreSpares() }
        }
        restoreSpares()
        sync()
    }

    func combo(_ mods: [KeySym], key keysym: KeySym, hold: (() -> Void)?) throws(NodeError) {
        let modCodes = mods.compactMap { keycode(for: $0)?.code }
        guard let k = keycode(for: keysym) else {
            throw NodeError(ComputerError.unsupportedKey, "the key cannot be typed on this keymap")
        }
        let shift = k.shift && !mods.contains(KeySym(XK_Shift_L)) ? keycode(for: KeySym(XK_Shift_L))?.code : nil
        let held = modCodes + [shift].compactMap { $0 }
        for m in held { key(m, down: true) }
        key(k.code, down: true)
        hold?()
        key(k.code, down: false)
        for m in held.reversed() { key(m, down: false) }
        restoreSpares()
        sync()
    }
}
