/// GNOME's monitors as Mutter lays them out (org.gnome.Mutter.DisplayConfig GetCurrentState): the
/// connector a screen cast records, and where each sits. Ordered by position, left to right then
/// top to bottom, as the node orders X11 monitors and Wayland outputs, so screenIndex means the
/// same on every backend.
public struct MutterMonitor: Sendable, Equatable {
    public let connector: String
    public let x: Int, y: Int
    /// The current mode's size in pixels (what a screen cast of the monitor delivers).
    public let width: Int, height: Int
    public let scale: Double

    /// For displayFrameId: changes when the monitor is replaced, moved or resized.
    public var identity: String { "gnome:\(connector):\(width)x\(height)@\(x),\(y):s\(scale)" }
}

public enum MutterDisplays {
    public static let service = "org.gnome.Mutter.DisplayConfig"

    public static func monitors(_ bus: SessionBus) throws(SessionBus.Failure) -> [MutterMonitor] {
        let state = try bus.call(service, "/org/gnome/Mutter/DisplayConfig", service, "GetCurrentState")
        guard state.count >= 3 else { throw SessionBus.Failure(name: "reply", message: "GetCurrentState answered \(state.count) values") }
        // monitors: a((ssss) a(siiddada{sv}) a{sv}): the connector and its modes, one marked current.
        var sizes: [String: (Int, Int)] = [:]
        for monitor in state[1].elements {
            let f = monitor.fields
            guard f.count >= 2, let connector = f[0].fields.first?.string else { continue }
            for mode in f[1].elements {
                let m = mode.fields
                guard m.count >= 7, m[6]["is-current"]?.bool == true, let w = m[1].int, let h = m[2].int else { continue }
                sizes[connector] = (w, h)
            }
        }
        // logical monitors: a(iiduba(ssss)a{sv}): position, scale, and the monitors they show.
        var found: [MutterMonitor] = []
        for logical in state[2].elements {
            let f = logical.fields
            guard f.count >= 6, let x = f[0].int, let y = f[1].int else { continue }
            let scale = f[2].double ?? 1
            for spec in f[5].elements {
                guard let connector = spec.fields.first?.string, let (w, h) = sizes[connector] else { continue }
                found.append(MutterMonitor(connector: connector, x: x, y: y, width: w, height: h, scale: scale))
            }
        }
        return found.sorted { ($0.x, $0.y, $0.connector) < ($1.x, $1.y, $1.connector) }
    }
}
