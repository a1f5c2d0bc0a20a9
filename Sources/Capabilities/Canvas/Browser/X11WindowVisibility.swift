import CX11
import Config
import Glibc
import Kit
import Support
import X11Support

/// Shows and hides the browser's top-level X11 windows directly (map/unmap by `_NET_WM_PID`).
/// Kiosk machines often run X with no window manager, where Chromium's own minimize (a request to
/// the window manager) does nothing; unmapping works with or without one.
enum X11WindowVisibility {
    /// Maps (raised) or unmaps every top-level window of `pid` on `display`; the number changed.
    @discardableResult
    static func set(visible: Bool, pid: pid_t, display: String?) -> Int {
        X11ErrorTrap.install()
        guard let d = XOpenDisplay(display) else { return 0 }
        defer { XCloseDisplay(d) }
        let pidAtom = XInternAtom(d, "_NET_WM_PID", 1)
        guard pidAtom != 0 else { return 0 }
        var changed = 0
        // Top-level windows are children of the root, or of a window manager's frame one level down.
        for w in children(d, cx11_default_root_window(d)) {
            for candidate in [w] + children(d, w) where windowPid(d, candidate, pidAtom) == pid {
                if visible { XMapRaised(d, candidate) } else { XUnmapWindow(d, candidate) }
                changed += 1
            }
        }
        XSync(d, 0)
        return changed
    }

    private static func children(_ d: OpaquePointer, _ w: Window) -> [Window] {
        var root: Window = 0, parent: Window = 0
        var list: UnsafeMutablePointer<Window>? = nil
        var count: UInt32 = 0
        guard XQueryTree(d, w, &root, &parent, &list, &count) != 0, let list else { return [] }
        defer { XFree(list) }
        return Array(UnsafeBufferPointer(start: list, count: Int(count)))
    }

    private static func windowPid(_ d: OpaquePointer, _ w: Window, _ atom: Atom) -> pid_t? {
        var type: Atom = 0
        var format: Int32 = 0
        var items: UInt = 0, after: UInt = 0
        var data: UnsafeMutablePointer<UInt8>? = nil
        X11ErrorTrap.reset(d)
        guard XGetWindowProperty(d, w, atom, 0, 1, 0, Atom(6) /* XA_CARDINAL */, &type, &format, &items, &after, &data) == 0,
              X11ErrorTrap.code(d) == 0, let data else { return nil }
        defer { XFree(data) }
        guard format == 32, items == 1 else { return nil }
        // Format-32 properties come back as C longs.
        return pid_t(truncatingIfNeeded: data.withMemoryRebound(to: Int.self, capacity: 1) { $0.pointee })
    }
}
