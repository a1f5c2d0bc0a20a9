import Kit
import WaylandSupport

/// What `doctor` says about a Wayland compositor: which of the protocols the node uses it offers,
/// and what each enables or what is missing without it.
enum WaylandProtocolReport {
    /// (global interface, what it enables)
    static let used: [(interface: String, enables: String)] = [
        ("zwlr_screencopy_manager_v1", "screen.snapshot and screen.record"),
        ("zxdg_output_manager_v1", "output names and layout (screenIndex order)"),
        ("zwlr_virtual_pointer_manager_v1", "pointer input for computer.act"),
        ("zwp_virtual_keyboard_manager_v1", "keyboard input for computer.act"),
        ("ext_idle_notifier_v1", "idle presence (newer compositors)"),
        ("org_kde_kwin_idle", "idle presence (sway 1.7, KDE)"),
    ]

    static func diagnose(socket: String) -> [Diagnosis] {
        let connection: WaylandConnection
        do { connection = try WaylandConnection(socket: socket) } catch {
            return [Diagnosis(.warn, "Wayland: \(error.message)")]
        }
        let offered = Dictionary(connection.globals.map { ($0.interface, $0.version) }, uniquingKeysWith: max)
        var out: [Diagnosis] = []
        let have = used.filter { offered[$0.interface] != nil }
        let missing = used.filter { offered[$0.interface] == nil }
        out.append(Diagnosis(.ok, "Wayland compositor at \(socket): \(connection.orderedOutputs.count) output(s) " +
                             "(\(connection.orderedOutputs.map { "\($0.name) \($0.width)x\($0.height)" }.joined(separator: ", "))); offers " +
                             have.map { "\($0.interface) v\(offered[$0.interface]!) (\($0.enables))" }.joined(separator: ", ")))
        if !missing.isEmpty {
            let level: Diagnosis.Level = offered["zwlr_screencopy_manager_v1"] == nil ? .warn : .ok
            out.append(Diagnosis(level, "Wayland compositor lacks " + missing.map { "\($0.interface) (\($0.enables))" }.joined(separator: ", ")))
        }
        return out
    }
}
