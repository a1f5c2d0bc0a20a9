import CX11Capture
import Config
import Kit
import Support
import X11Support

/// One Xlib connection, owned by one grabber on one thread. Installs the survival hooks first:
/// Xlib's defaults exit the process on a protocol error (XShmAttach refused by a remote server)
/// or when the server goes away.
final class X11Connection {
    let name: String
    /// Display*; closed in deinit unless the server connection broke.
    let display: OpaquePointer
    /// Raised by Xlib's I/O-exit hook when the connection breaks.
    private let dead: UnsafeMutablePointer<Int32>

    init(name: String) throws(NodeError) {
        guard let d = XOpenDisplay(name) else {
            throw ScreenError.unavailable("cannot connect to X display \(name): is the X server running, and may this user " +
                                          "connect (DISPLAY/XAUTHORITY)? Set capabilities.screen.display to the right display")
        }
        self.name = name
        display = d
        dead = .allocate(capacity: 1)
        dead.pointee = 0
        cx11cap_survive_io_errors(d, dead)
        X11ErrorTrap.install()
    }

    /// A broken Display is abandoned, not closed: closing it would run the I/O error path again.
    deinit {
        X11ErrorTrap.reset(display)
        if !isDead {
            XCloseDisplay(display)
            dead.deallocate()
        }
    }

    var isDead: Bool { dead.pointee != 0 }

    /// The first X protocol error since `resetErrors()` (0 = none).
    var lastError: Int32 { X11ErrorTrap.code(display) }
    func resetErrors() { X11ErrorTrap.reset(display) }

    /// Runs `request` and waits for the server's answer; returns the X error code it caused (0 = none).
    func checked(_ request: () -> Void) -> Int32 {
        X11ErrorTrap.reset(display)
        request()
        XSync(display, 0)
        return isDead ? -1 : X11ErrorTrap.code(display)
    }

    /// Root window of X screen `screen`.
    func root(_ screen: Int32) -> Window { cx11cap_root_window(display, screen) }
    var screenCount: Int32 { cx11cap_screen_count(display) }
    var defaultScreen: Int32 { cx11cap_default_screen(display) }
}
