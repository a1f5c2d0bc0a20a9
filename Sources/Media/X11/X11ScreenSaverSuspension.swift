import CX11
import Glibc
import Support

/// While it lasts, the X server's screensaver — and with it DPMS power-saving — stays off on one
/// display (MIT-SCREEN-SAVER's XScreenSaverSuspend): a kiosk's canvas must not blank while it is
/// shown. The suspension belongs to this client connection, so it ends when `end()` closes it, or
/// when the node dies and the server drops the connection: the screen can never stay on for good
/// because of us.
public final class X11ScreenSaverSuspension: @unchecked Sendable {  // the Display pointer lives under `connection`'s lock
    private let connection: Locked<OpaquePointer?>
    public let displayName: String

    /// nil when the display cannot be opened or has no screensaver extension (nothing to suspend).
    public init?(display: String) {
        guard let d = XOpenDisplay(display) else { return nil }
        var event: Int32 = 0, error: Int32 = 0
        guard XScreenSaverQueryExtension(d, &event, &error) != 0 else { XCloseDisplay(d); return nil }
        XScreenSaverSuspend(d, 1)
        XFlush(d)
        connection = Locked(d)
        displayName = display
    }

    /// Lets the screensaver run again (idempotent).
    public func end() {
        connection.withLock { d in
            guard let display = d else { return }
            XScreenSaverSuspend(display, 0)
            XCloseDisplay(display)
            d = nil
        }
    }

    deinit { end() }
}
