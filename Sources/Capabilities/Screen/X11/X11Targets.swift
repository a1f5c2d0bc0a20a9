import CX11Capture
import Config
import Kit
import Support

/// A rectangle of one X screen that screenIndex can name.
struct X11Target: Equatable, Sendable {
    /// X screen number (":0.<screen>").
    let screen: Int32
    let x: Int
    let y: Int
    let width: Int
    let height: Int
    /// "monitor DP-1" / "screen 1", for logs and errors.
    let label: String
}

/// What `screenIndex` means on X11:
/// - when the default X screen has more than one XRandR monitor (RandR 1.5 `XRRGetMonitors`, the
///   list `xrandr --listmonitors` prints, in that order), screenIndex picks a monitor, and the
///   capture is that monitor's rectangle of the screen;
/// - otherwise it picks an X screen (`Xvfb -screen 0 … -screen 1 …`, ":0.1"), captured whole.
/// Monitors of non-default X screens are not indexed (a setup with both is rare).
enum X11Targets {
    static func list(_ connection: X11Connection) -> [X11Target] {
        let monitors = self.monitors(connection)
        if monitors.count > 1 { return monitors }
        return (0..<connection.screenCount).map { s in
            X11Target(screen: s, x: 0, y: 0, width: Int(cx11cap_display_width(connection.display, s)),
                      height: Int(cx11cap_display_height(connection.display, s)), label: "screen \(s)")
        }
    }

    static func target(_ index: Int, on connection: X11Connection) throws(NodeError) -> X11Target {
        let all = list(connection)
        guard index < all.count else {
            let kind = all.first?.label.hasPrefix("monitor") == true ? "monitor" : "screen"
            throw NodeError.invalidRequest("screenIndex \(index) is out of range: X display \(connection.name) has " +
                                           "\(all.count) \(kind)\(all.count == 1 ? "" : "s") (screenIndex 0..\(all.count - 1))")
        }
        return all[index]
    }

    /// Active RandR monitors of the default screen, clipped to it; empty without RandR 1.5.
    private static func monitors(_ connection: X11Connection) -> [X11Target] {
        let d = connection.display
        var event: Int32 = 0, error: Int32 = 0, major: Int32 = 0, minor: Int32 = 0
        guard XRRQueryExtension(d, &event, &error) != 0, XRRQueryVersion(d, &major, &minor) != 0,
              major > 1 || (major == 1 && minor >= 5) else { return [] }
        let screen = connection.defaultScreen
        let screenWidth = Int(cx11cap_display_width(d, screen)), screenHeight = Int(cx11cap_display_height(d, screen))
        var count: Int32 = 0
        guard let list = XRRGetMonitors(d, connection.root(screen), 1, &count) else { return [] }
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
