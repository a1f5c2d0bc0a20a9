import CWaylandClient
import CWaylandProtocols
import Glibc
import Kit
import Support

/// KWin's fake input (org_kde_kwin_fake_input v4, KDE Plasma 5.27 and later), which KWin shows
/// only to a program its desktop entries grant it (KWinGrant): the pointer in global compositor coordinates, Linux button and key
/// codes, wheel notches. Shared by computer.act and desktop.stream; one thread at a time.
public final class KWinFakeInput {
    public let connection: WaylandConnection
    private let fake: OpaquePointer

    /// `purpose`: what KWin is told the input is for.
    public init(socket: String, purpose: String, unavailableCode: NodeError.Code) throws(NodeError) {
        let c = try WaylandConnection(socket: socket, unavailableCode: unavailableCode)
        guard let fake = c.kdeFakeInput, c.kdeFakeInputVersion >= 4 else {
            let exe = (try? FileSystem.destinationOfSymbolicLink("/proc/self/exe")) ?? "this program"
            throw NodeError(unavailableCode, c.kdeFakeInput == nil
                ? "KWin at \(socket) does not offer its fake input to \(exe): it shows org_kde_kwin_fake_input only to programs a desktop entry " +
                  "grants it (X-KDE-Wayland-Interfaces); the package installs \(KWinGrant.file) for " +
                  "\(KWinGrant.program) (then \(KWinGrant.refresh))"
                : "KWin's fake input is version \(c.kdeFakeInputVersion); keys need version 4 (Plasma 5.27 or later)")
        }
        connection = c
        self.fake = fake
        org_kde_kwin_fake_input_authenticate(fake, "openclaw-node", purpose)
        try c.roundtrip()
    }

    /// Moves the pointer to (x, y) of `output`, and waits until KWin has handled it (focus moved
    /// to the surface under it) so a button that follows lands there.
    public func move(on output: WaylandConnection.Output, x: Int, y: Int) throws(NodeError) {
        org_kde_kwin_fake_input_pointer_motion_absolute(fake, wl_fixed_from_int(Int32(clamping: output.x + x)), wl_fixed_from_int(Int32(clamping: output.y + y)))
        try connection.roundtrip()
    }

    /// A Linux button code (BTN_LEFT 0x110 …) pressed or released.
    public func button(_ code: UInt32, down: Bool) { org_kde_kwin_fake_input_button(fake, code, down ? 1 : 0) }

    /// Wheel notches (15 units each, the libinput convention): axis 0 vertical, 1 horizontal.
    public func scroll(axis: UInt32, notches: Int32) { org_kde_kwin_fake_input_axis(fake, axis, wl_fixed_from_int(15 * notches)) }

    /// A Linux key code pressed or released.
    public func key(_ code: UInt32, down: Bool) { org_kde_kwin_fake_input_keyboard_key(fake, code, down ? 1 : 0) }

    public func flush() { _ = wl_display_flush(connection.display) }
}
