import CX11
import Kit
import Support

/// A rectangle of one X screen that screenIndex can name.
public struct X11Target: Equatable, Sendable {
    /// X screen number (":0.<screen>").
    public let screen: Int32
    public let x: Int
    public let y: Int
    public let width: Int
    public let height: Int
    /// "monitor DP-1" / "screen 1", for logs and errors.
    public let label: String

    public init(screen: Int32, x: Int, y: Int, width: Int, height: Int, label: String) {
        self.screen = screen; self.x = x; self.y = y; self.width = width; self.height = height; self.label = label
    }

    /// What identifies this target for a displayFrameId: the display, the monitor or screen, and
    /// its place and size on the X screen.
    public func identity(display: String) -> String {
        ["x11", display, label, String(screen), String(x), String(y), String(width), String(height)].joined(separator: "\0")
    }
}

/// What `screenIndex` means on X11, for the screen and computer bundles alike:
/// - when the default X screen has more than one XRandR monitor (RandR 1.5 `XRRGetMonitors`, the
///   list `xrandr --listmonitors` prints, in that order), screenIndex picks a monitor, and the
///   capture (or input) is that monitor's rectangle of the screen;
/// - otherwise it picks an X screen (`Xvfb -screen 0 … -screen 1 …`, ":0.1"), whole.
/// Monitors of non-default X screens are not indexed (a setup with both is rare).
public enum X11Targets {
    /// `display` is an open Display*, `name` its name for messages.
    public static func list(_ display: OpaquePointer) -> [X11Target] {
        let monitors = self.monitors(display)
        if monitors.count > 1 { return monitors }
        return (0..<cx11_screen_count(display)).map { s in
            X11Target(screen: s, x: 0, y: 0, width: Int(cx11_display_width(display, s)),
                      height: Int(cx11_display_height(display, s)), label: "screen \(s)")
        }
    }

    public static func target(_ index: Int, on display: OpaquePointer, name: String) throws(NodeError) -> X11Target {
        let all = list(display)
        guard index < all.count else {
            let kind = all.first?.label.hasPrefix("monitor") == true ? "monitor" : "screen"
            throw NodeError.invalidRequest("screenIndex \(index) is out of range: X display \(name) has " +
                                           "\(all.count) \(kind)\(all.count == 1 ? "" : "s") (screenIndex 0..\(all.count - 1))")
        }
        return all[index]
    }

    /// Active RandR monitors of the default screen, clipped to it; empty without RandR 1.5.
    private static func monitors(_ d: OpaquePointer) -> [X11Target] {
        var event: Int32 = 0, error: Int32 = 0, major: Int32 = 0, minor: Int32 = 0
        guard XRRQueryExtension(d, &event, &error) != 0, XRRQueryVersion(d, &major, &minor) != 0,
              major > 1 || (major == 1 && minor >= 5) else { return [] }
        let screen = cx11_default_screen(d)
        let screenWidth = Int(cx11_display_width(d, screen)), screenHeight = Int(cx11_display_height(d, screen))
        var count: Int32 = 0
        guard let list = XRRGetMonitors(d, cx11_root_window(d, screen), 1, &count) else { return [] }
        defer { XRRFreeMonitors(list) }
        var out: [X11Target] = []
        for i in 0..<Int(count) {
            let m = list[i]
            let x = max(0, Int(m.x)), y = max(0, Int(m.y))
            let w = min(Int(m.x) + Int(m.width), screenWidth) - x
            let h = min(Int(m.y) + Int(m.height), screenHeight) - y
            guard w > 0, h > 0 else { continue }
            var label = "monitor \(i)"
            if let name = XGetAtomName(d, m.name) {
                label = "monitor \(String(cString: name))"
                XFree(name)
            }
            out.append(X11Target(screen: screen, x: x, y: y, width: w, height: h, label: label))
        }
        return out
    }
}
