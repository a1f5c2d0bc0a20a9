import CWaylandClient
import CWaylandProtocols
import CXTest
import Glibc
import Kit
import Support
import WaylandSupport

/// computer.act's input on a wlroots compositor: a virtual pointer bound to the target output
/// (wlr-virtual-pointer v2) and a virtual keyboard whose keymap the node writes itself, one keycode
/// per symbol it needs, so any Unicode character types without a layout that has it.
final class WaylandInput: ComputerInput {
    var backendName: String { "the virtual pointer and keyboard of the Wayland compositor at \(connection.socket)" }
    private let connection: WaylandConnection
    private let keyboard: OpaquePointer
    private var pointer: (proxy: OpaquePointer, output: UInt32)?
    /// The keysyms of the uploaded keymap: keysym i is on evdev keycode i + 1 (xkb keycode i + 9).
    private var keymap: [KeySym] = []
    private(set) var heldButtons: [UInt32] = []
    private var heldKeys: [UInt32] = []
    private var depressedMods: UInt32 = 0
    private static let unavailable = ComputerError.unavailable

    init(socket: String) throws(NodeError) {
        let c = try WaylandConnection(socket: socket, unavailableCode: Self.unavailable)
        guard let seat = c.seat, c.virtualPointerManager != nil, let keyboards = c.virtualKeyboardManager,
              let kb = zwp_virtual_keyboard_manager_v1_create_virtual_keyboard(keyboards, seat) else {
            let missing = [c.virtualPointerManager == nil ? "zwlr_virtual_pointer_manager_v1" : nil,
                           c.virtualKeyboardManager == nil ? "zwp_virtual_keyboard_manager_v1" : nil,
                           c.seat == nil ? "wl_seat" : nil].compactMap { $0 }
            throw NodeError(ComputerError.unavailable, "the Wayland compositor at \(socket) offers no \(missing.joined(separator: " or ")), " +
                            "so the node cannot send it input through them (wlroots compositors — sway, wayfire, labwc — have them; GNOME and KDE are driven through their own interfaces: backend \"gnome\" or \"kde\")")
        }
        connection = c
        keyboard = kb
        try upload([KeySym(XK_space)])
    }

    deinit {
        releaseAll()
        if let pointer { zwlr_virtual_pointer_v1_destroy(pointer.proxy) }
        zwp_virtual_keyboard_v1_destroy(keyboard)
        _ = wl_display_flush(connection.display)
    }

    private var now: UInt32 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt32(truncatingIfNeeded: Int(ts.tv_sec) * 1000 + Int(ts.tv_nsec) / 1_000_000)
    }

    func target(screenIndex: Int) throws(NodeError) -> InputTarget { try connection.inputTarget(screenIndex: screenIndex) }

    // MARK: pointer

    func move(to target: InputTarget, x: Int, y: Int) throws(NodeError) {
        guard let o = target.handle as? WaylandConnection.Output, let manager = connection.virtualPointerManager else {
            throw NodeError.invalidRequest("not a Wayland target")
        }
        if pointer?.output != o.globalName {
            if let old = pointer { zwlr_virtual_pointer_v1_destroy(old.proxy) }
            // v2 binds the pointer to the output, so absolute motion is in that output's pixels.
            let made = connection.virtualPointerVersion >= 2
                ? zwlr_virtual_pointer_manager_v1_create_virtual_pointer_with_output(manager, connection.seat, o.proxy)
                : zwlr_virtual_pointer_manager_v1_create_virtual_pointer(manager, connection.seat)
            guard let made else { throw connection.lost() }
            pointer = (made, o.globalName)
            // The compositor adds the new device to the seat while handling this request; events
            // it gets before that are dropped (sway: the first click was lost).
            try connection.roundtrip()
            // A seat that had no pointer now announces one, and each client binds its wl_pointer
            // only when it reads that: buttons sent before then never reach it (sway 1.7: the
            // first click after the node's pointer appeared was lost, though the motion arrived).
            // No event says the clients have bound it: a pause, once per pointer, not polling.
            Pause.for(.milliseconds(150))
            try connection.roundtrip()
        }
        guard let p = pointer?.proxy else { return }
        if connection.virtualPointerVersion >= 2 {
            // The compositor's output sizes and positions are its to say; clamped, never trapped on.
            zwlr_virtual_pointer_v1_motion_absolute(p, now, UInt32(clamping: x), UInt32(clamping: y), UInt32(clamping: o.width), UInt32(clamping: o.height))
        } else {
            // v1: absolute over the whole layout.
            let outs = connection.orderedOutputs
            let w = outs.map { $0.x + $0.width }.max() ?? o.width, h = outs.map { $0.y + $0.height }.max() ?? o.height
            zwlr_virtual_pointer_v1_motion_absolute(p, now, UInt32(clamping: o.x &+ x), UInt32(clamping: o.y &+ y), UInt32(clamping: w), UInt32(clamping: h))
        }
        zwlr_virtual_pointer_v1_frame(p)
        // The motion is handled (focus moved to the surface under it) before any button follows.
        try connection.roundtrip()
    }

    func button(_ b: UInt32, down: Bool) {
        guard let p = pointer?.proxy else { return }
        // Linux input button codes: BTN_LEFT, BTN_MIDDLE, BTN_RIGHT.
        let code: UInt32 = b == 3 ? 0x111 : b == 2 ? 0x112 : 0x110
        zwlr_virtual_pointer_v1_button(p, now, code, down ? 1 : 0)
        zwlr_virtual_pointer_v1_frame(p)
        if down { heldButtons.append(b) } else { heldButtons.removeAll { $0 == b } }
        sync()
    }

    func scroll(_ direction: String, amount: Int, stop: CancelFlag) {
        guard let p = pointer?.proxy else { return }
        let axis: UInt32 = direction == "left" || direction == "right" ? 1 : 0
        let sign: Int32 = direction == "up" || direction == "left" ? -1 : 1
        for _ in 0..<max(1, amount) {
            zwlr_virtual_pointer_v1_axis_source(p, 0)  // wheel
            // One wheel notch: 15 units (the libinput convention) and one discrete step.
            zwlr_virtual_pointer_v1_axis_discrete(p, now, axis, wl_fixed_from_int(15 * sign), sign)
            zwlr_virtual_pointer_v1_frame(p)
            sync()
            if !stop.sleep(milliseconds: 20) { return }  // pacing: one notch per 20 ms, as a wheel gives them
        }
    }

    // MARK: keyboard

    func modifiers(_ mods: [KeySym], down: Bool) throws(NodeError) {
        try ensure(mods)
        for m in down ? mods : mods.reversed() { key(m, down: down) }
        sync()
    }

    func type(_ text: String, stop: CancelFlag) throws(NodeError) {
        let syms = text.unicodeScalars.map { KeyNames.keysym(for: $0) }
        // At most this many symbols per keymap: long texts are typed in parts.
        var i = 0
        while i < syms.count {
            var part: [KeySym] = []
            var end = i
            while end < syms.count, part.count < 200 || part.contains(syms[end]) {
                if !part.contains(syms[end]) { part.append(syms[end]) }
                end += 1
            }
            try ensure(part)
            for s in syms[i..<end] {
                key(s, down: true)
                key(s, down: false)
                sync()
                // Pacing between keys; ends at once (and typing stops) when `stop` is raised.
                if !stop.sleep(milliseconds: 4) { return }
            }
            i = end
        }
    }

    func combo(_ mods: [KeySym], key keysym: KeySym, hold: (() -> Void)?) throws(NodeError) {
        try ensure(mods + [keysym])
        for m in mods { key(m, down: true) }
        key(keysym, down: true)
        sync()
        hold?()
        key(keysym, down: false)
        for m in mods.reversed() { key(m, down: false) }
        sync()
    }

    func releaseAll() {
        if let p = pointer?.proxy {
            for b in heldButtons.reversed() {
                zwlr_virtual_pointer_v1_button(p, now, b == 3 ? 0x111 : b == 2 ? 0x112 : 0x110, 0)
                zwlr_virtual_pointer_v1_frame(p)
            }
        }
        heldButtons.removeAll()
        for code in heldKeys.reversed() { zwp_virtual_keyboard_v1_key(keyboard, now, code, 0) }
        heldKeys.removeAll()
        depressedMods = 0
        zwp_virtual_keyboard_v1_modifiers(keyboard, 0, 0, 0, 0)
        sync()
    }

    func sync() { _ = wl_display_flush(connection.display) }

    /// Presses or releases the key for `keysym` (it must be in the keymap), and keeps the
    /// compositor's modifier state in step for modifier keys.
    private func key(_ keysym: KeySym, down: Bool) {
        guard let index = keymap.firstIndex(of: keysym) else { return }
        let code = UInt32(index + 1)
        zwp_virtual_keyboard_v1_key(keyboard, now, code, down ? 1 : 0)
        if down { heldKeys.append(code) } else { heldKeys.removeAll { $0 == code } }
        if let bit = Self.modifierBit(keysym) {
            depressedMods = down ? depressedMods | bit : depressedMods & ~bit
            zwp_virtual_keyboard_v1_modifiers(keyboard, depressedMods, 0, 0, 0)
        }
    }

    /// The real modifiers of xkb's "complete" compatibility map.
    static func modifierBit(_ keysym: KeySym) -> UInt32? {
        guard let sym = Int32(exactly: keysym) else { return nil }
        switch sym {
        case XK_Shift_L, XK_Shift_R: return 1
        case XK_Control_L, XK_Control_R: return 4
        case XK_Alt_L, XK_Alt_R, XK_Meta_L, XK_Meta_R: return 8
        case XK_Super_L, XK_Super_R, XK_Hyper_L, XK_Hyper_R: return 64
        default: return nil
        }
    }

    /// Makes sure every symbol has a key, uploading a new keymap when one is missing. Nothing may
    /// be held down across an upload (its keycodes could change meaning).
    private func ensure(_ syms: [KeySym]) throws(NodeError) {
        let missing = syms.filter { !keymap.contains($0) }
        guard !missing.isEmpty else { return }
        var wanted = heldKeys.isEmpty && keymap.count + missing.count > 240 ? [] : keymap
        for s in syms where !wanted.contains(s) { wanted.append(s) }
        try upload(wanted)
    }

    private func upload(_ syms: [KeySym]) throws(NodeError) {
        let text = Self.keymapText(syms)
        var bytes = Array(text.utf8) + [0]
        guard let file = SharedMemoryFile(name: "openclaw-node-keymap"), write(file.fd, &bytes, bytes.count) == bytes.count else {
            throw NodeError(ComputerError.driverError, "cannot pass a keymap to the compositor: \(String(cString: strerror(errno)))")
        }
        zwp_virtual_keyboard_v1_keymap(keyboard, 1 /* WL_KEYBOARD_KEYMAP_FORMAT_XKB_V1 */, file.fd, UInt32(bytes.count))
        keymap = syms
        try connection.roundtrip()
        // Clients read the new keymap when the compositor forwards it; give them that moment, or
        // the first key after it may be looked up in the old one. No event says they have: a pause.
        Pause.for(.milliseconds(30))
    }

    /// An XKB keymap with one key per symbol: keycode 9 + i carries syms[i] on its only level, so a
    /// character needs no Shift or AltGr; modifier symbols get their modifier_map entries.
    static func keymapText(_ syms: [KeySym]) -> String {
        var codes = "", symbols = "", mods: [String: [String]] = [:]
        for (i, s) in syms.enumerated() {
            codes += "    <K\(i + 1)> = \(i + 9);\n"
            symbols += "    key <K\(i + 1)> {[ \(name(s)) ]};\n"
            if let bit = modifierBit(s) {
                let m = bit == 1 ? "Shift" : bit == 4 ? "Control" : bit == 8 ? "Mod1" : "Mod4"
                mods[m, default: []].append("<K\(i + 1)>")
            }
        }
        for (m, keys) in mods.sorted(by: { $0.key < $1.key }) { symbols += "    modifier_map \(m) { \(keys.joined(separator: ", ")) };\n" }
        return """
            xkb_keymap {
            xkb_keycodes "openclaw-node" {
                minimum = 8;
                maximum = \(max(9, syms.count + 8));
            \(codes)};
            xkb_types "openclaw-node" { include "complete" };
            xkb_compatibility "openclaw-node" { include "complete" };
            xkb_symbols "openclaw-node" {
            \(symbols)};
            };

            """
    }

    /// The XKB name of a keysym: "U00E9" for characters, X11's names ("Return", "Control_L") for the rest.
    static func name(_ s: KeySym) -> String {
        if s < 0x100 || s & 0xff00_0000 == 0x0100_0000 { return "U" + UInt32(s & 0x00ff_ffff).upperHex(4) }
        if let n = XKeysymToString(s) { return String(cString: n) }
        return "0x" + UInt32(truncatingIfNeeded: s).hex()
    }
}
