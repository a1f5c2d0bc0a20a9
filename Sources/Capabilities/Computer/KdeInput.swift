import CWaylandClient
import CWaylandProtocols
import CXTest
import Glibc
import Kit
import Support
import WaylandSupport

/// computer.act's input on KDE Plasma through KWin's fake input (org_kde_kwin_fake_input v4),
/// which KWin shows only to a program its desktop entries grant it (the package's
/// ai.openclaw.node.desktop for /usr/bin/openclaw-node). The pointer moves in the compositor's
/// global coordinates (the output's position plus the point); keys are Linux key codes, so what
/// can be typed is what a US keyboard layout types (KWin's fake input takes no keymap).
final class KdeInput: ComputerInput {
    private let connection: WaylandConnection
    private let fake: OpaquePointer
    private(set) var heldButtons: [UInt32] = []
    private var heldKeys: [UInt32] = []
    var backendName: String { "KWin's fake input on the compositor at \(connection.socket)" }

    init(socket: String) throws(NodeError) {
        let c = try WaylandConnection(socket: socket, unavailableCode: ComputerError.unavailable)
        guard let fake = c.kdeFakeInput, c.kdeFakeInputVersion >= 4 else {
            let exe = (try? FileSystem.destinationOfSymbolicLink("/proc/self/exe")) ?? "this program"
            throw NodeError(ComputerError.unavailable, c.kdeFakeInput == nil
                ? "KWin at \(socket) does not offer its fake input to \(exe): it shows org_kde_kwin_fake_input only to programs a desktop entry " +
                  "grants it (X-KDE-Wayland-Interfaces); the package installs /usr/share/applications/ai.openclaw.node.desktop for " +
                  "/usr/bin/openclaw-node (then run kbuildsycoca5 as the desktop's user, or log in again)"
                : "KWin's fake input is version \(c.kdeFakeInputVersion); keys need version 4 (Plasma 5.27 or later)")
        }
        connection = c
        self.fake = fake
        org_kde_kwin_fake_input_authenticate(fake, "openclaw-node", "computer control for OpenClaw agents")
        try c.roundtrip()
    }

    deinit { releaseAll() }

    func target(screenIndex: Int) throws(NodeError) -> InputTarget { try connection.inputTarget(screenIndex: screenIndex) }

    func move(to target: InputTarget, x: Int, y: Int) throws(NodeError) {
        guard let o = target.handle as? WaylandConnection.Output else { throw NodeError.invalidRequest("not a Wayland target") }
        org_kde_kwin_fake_input_pointer_motion_absolute(fake, wl_fixed_from_int(Int32(clamping: o.x + x)), wl_fixed_from_int(Int32(clamping: o.y + y)))
        // The motion is handled (focus moved to the surface under it) before any button follows.
        try connection.roundtrip()
    }

    /// Linux input button codes: BTN_LEFT, BTN_MIDDLE, BTN_RIGHT.
    private static func code(_ b: UInt32) -> UInt32 { b == 3 ? 0x111 : b == 2 ? 0x112 : 0x110 }

    func button(_ b: UInt32, down: Bool) {
        org_kde_kwin_fake_input_button(fake, Self.code(b), down ? 1 : 0)
        if down { heldButtons.append(b) } else { heldButtons.removeAll { $0 == b } }
        sync()
    }

    func scroll(_ direction: String, amount: Int, stop: CancelFlag) {
        let axis: UInt32 = direction == "left" || direction == "right" ? 1 : 0
        let sign: Int32 = direction == "up" || direction == "left" ? -1 : 1
        for _ in 0..<max(1, amount) {
            // One wheel notch: 15 units, the libinput convention.
            org_kde_kwin_fake_input_axis(fake, axis, wl_fixed_from_int(15 * sign))
            sync()
            if !stop.sleep(milliseconds: 20) { return }
        }
    }

    private func key(_ code: UInt32, down: Bool) {
        org_kde_kwin_fake_input_keyboard_key(fake, code, down ? 1 : 0)
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
        // Every character first, so nothing is typed of a text that cannot be typed whole.
        let keys = try text.unicodeScalars.map { (c: Unicode.Scalar) throws(NodeError) -> (code: UInt32, shift: Bool) in try keyCode(KeyNames.keysym(for: c)) }
        for k in keys {
            if k.shift { key(USKeyCodes.leftShift, down: true) }
            key(k.code, down: true)
            key(k.code, down: false)
            if k.shift { key(USKeyCodes.leftShift, down: false) }
            sync()
            if !stop.sleep(milliseconds: 4) { return }
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
        for b in heldButtons.reversed() { org_kde_kwin_fake_input_button(fake, Self.code(b), 0) }
        heldButtons.removeAll()
        for k in heldKeys.reversed() { org_kde_kwin_fake_input_keyboard_key(fake, k, 0) }
        heldKeys.removeAll()
        sync()
    }

    func sync() { _ = wl_display_flush(connection.display) }
}
