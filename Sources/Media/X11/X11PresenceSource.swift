import CX11
import Config
import Glibc
import Kit
import Support

/// `presence.mode: "x11"`: foreground while the X screensaver is not active on the display
/// (MIT-SCREEN-SAVER extension, the state screen lockers drive).
public final class X11PresenceSource: PresenceSource, Sendable {
    private let displayName: String
    /// Owned by this object; opened lazily and re-opened after the server goes away. Xlib: one
    /// thread at a time, so only under this lock. Unchecked: the pointers never leave the lock of
    /// `connection`, which is what makes them safe to share.
    private struct Connection: @unchecked Sendable {
        var display: OpaquePointer?
        /// Raised by Xlib's I/O-exit handler when the server connection breaks.
        var dead: UnsafeMutablePointer<Int32>?
    }
    private let connection = Locked(Connection())

    public init(display: String?) {
        self.displayName = display ?? ProcessEnvironment.current["DISPLAY"] ?? ":0"
    }

    deinit { connection.withLock { Self.dropDisplay(&$0) } }

    /// A broken Display is abandoned, not closed: closing it would run the I/O error path again.
    private static func dropDisplay(_ c: inout Connection) {
        if let d = c.display, let dead = c.dead, dead.pointee == 0 { XCloseDisplay(d); dead.deallocate() }
        c.display = nil
        c.dead = nil
    }

    public func sample() async -> PresenceSample { connection.withLock { sampleLocked(&$0) } }

    private func sampleLocked(_ c: inout Connection) -> PresenceSample {
        if let dead = c.dead, dead.pointee != 0 { Self.dropDisplay(&c) }
        if c.display == nil {
            guard let d = XOpenDisplay(displayName) else {
                return PresenceSample(.background, "X display \(displayName) is not reachable")
            }
            let flag = UnsafeMutablePointer<Int32>.allocate(capacity: 1)
            flag.pointee = 0
            cx11_survive_io_errors(d, flag)
            c.display = d
            c.dead = flag
        }
        let d = c.display!
        var event: Int32 = 0, error: Int32 = 0
        guard XScreenSaverQueryExtension(d, &event, &error) != 0 else {
            return PresenceSample(.foreground, "display \(displayName) has no screensaver extension; assuming someone is there")
        }
        guard let info = XScreenSaverAllocInfo() else { return PresenceSample(.foreground, "out of memory") }
        defer { XFree(info) }
        guard XScreenSaverQueryInfo(d, cx11_default_root_window(d), info) != 0 else {
            // The connection broke (X restarted): drop it so the next sample reconnects.
            Self.dropDisplay(&c)
            return PresenceSample(.background, "lost the connection to X display \(displayName)")
        }
        if info.pointee.state == ScreenSaverOn {
            return PresenceSample(.background, "screensaver active on \(displayName)")
        }
        return PresenceSample(.foreground, "screensaver off on \(displayName)")
    }
}
