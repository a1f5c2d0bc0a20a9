import Foundation
@testable import Support

/// Debian's gnome-shell started headless for one test, with virtual monitors, in a private session:
/// its own session bus (no service directories, so nothing is bus-activated behind the test's back),
/// a stand-in system bus (gnome-shell dies at start without one), PipeWire and WirePlumber, and
/// XDG_RUNTIME_DIR and HOME of its own. Each monitor shows a GTK 4 probe window
/// (Tests/gnome/probe_window.py) of one colour that logs the input it receives. Every process is
/// started here and stopped by its PID.
final class GnomeShell: @unchecked Sendable {
    let dir: String
    let runtimeDir: String
    let sessionBus: String
    let monitors: [(connector: String, width: Int, height: Int, rgb: String)]
    private var processes: [BackgroundProcess] = []
    private var windows: [BackgroundProcess] = []

    static var available: Bool {
        let tools = ["/usr/bin/gnome-shell", "/usr/bin/pipewire", "/usr/bin/wireplumber", "/usr/bin/dbus-daemon", "/usr/bin/dbus-send"]
            .allSatisfy { FileManager.default.isExecutableFile(atPath: $0) }
        let gtk4 = ["x86_64", "aarch64"].contains { FileManager.default.fileExists(atPath: "/usr/lib/\($0)-linux-gnu/girepository-1.0/Gtk-4.0.typelib") }
        return getuid() == 0 && tools && gtk4
    }

    /// The session's PipeWire socket.
    var pipewireSocket: String { runtimeDir + "/pipewire-0" }

    /// What every process of the session gets.
    var environment: [String: String] {
        ["XDG_RUNTIME_DIR": runtimeDir, "HOME": dir + "/home", "DBUS_SESSION_BUS_ADDRESS": sessionBus,
         "DBUS_SYSTEM_BUS_ADDRESS": "unix:path=\(runtimeDir)/system_bus", "WAYLAND_DISPLAY": "wayland-0",
         "XDG_CURRENT_DESKTOP": "GNOME", "XDG_SESSION_TYPE": "wayland", "GSETTINGS_BACKEND": "keyfile",
         "NO_AT_BRIDGE": "1", "GTK_A11Y": "none", "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"]
    }

    /// What the session bus refuses one account (nil: nobody is refused).
    private let refusedAccount: String?

    /// `monitors`: size and colour of each virtual monitor, left to right (Meta-0, Meta-1, …).
    /// `refuseMutterTo`: an account whose calls to Mutter's screen cast and remote desktop the
    /// session bus answers with AccessDenied, as a GNOME that closed those APIs to other programs
    /// does (the bus's own policy: the name is still there, its calls are refused).
    init(monitors specs: [(width: Int, height: Int, rgb: String)], refuseMutterTo account: String? = nil) throws {
        refusedAccount = account
        dir = TestPaths.tempDir("gnome")
        runtimeDir = dir + "/run"
        sessionBus = "unix:path=\(dir)/run/bus"
        monitors = specs.enumerated().map { ("Meta-\($0.offset)", $0.element.width, $0.element.height, $0.element.rgb) }
        try FileManager.default.createDirectory(atPath: runtimeDir, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: dir + "/home/.config/glib-2.0/settings", withIntermediateDirectories: true)
        chmod(runtimeDir, 0o700)
        // No notification banners: GNOME greets root with one ("Logged in as a privileged user")
        // over the top of the screen, fullscreen windows included.
        try "[org/gnome/desktop/notifications]\nshow-banners=false\n".write(toFile: dir + "/home/.config/glib-2.0/settings/keyfile",
                                                                          atomically: false, encoding: .utf8)
        do {
            try start()
        } catch {
            stop()
            throw error
        }
    }

    private func start() throws {
        let policy = refusedAccount.map {
            "<policy user=\"\($0)\"><deny send_destination=\"org.gnome.Mutter.ScreenCast\"/><deny send_destination=\"org.gnome.Mutter.RemoteDesktop\"/></policy>"
        } ?? ""
        try SessionBuses.start(runtimeDir: runtimeDir, configDir: dir, environment: environment, sessionPolicy: policy, into: &processes)
        processes.append(try BackgroundProcess("/usr/bin/pipewire", [], env: environment))
        guard waitUntil(timeout: 10, { FileManager.default.fileExists(atPath: self.runtimeDir + "/pipewire-0") }) else {
            throw TestFailure("pipewire did not start: \(processes.last?.log ?? "")")
        }
        processes.append(try BackgroundProcess("/usr/bin/wireplumber", [], env: environment))
        let shell = try BackgroundProcess("/usr/bin/gnome-shell", ["--headless", "--wayland", "--no-x11"]
                                            + monitors.flatMap { ["--virtual-monitor", "\($0.width)x\($0.height)"] }, env: environment)
        processes.append(shell)
        guard waitUntil(timeout: 30, { self.hasOwner("org.gnome.Shell") && self.hasOwner("org.gnome.Mutter.ScreenCast") }) else {
            throw TestFailure("gnome-shell did not start:\n\(shell.log.suffix(3000))")
        }
        for m in monitors { try openWindow(on: m.connector, rgb: m.rgb) }
        let leave = try runProcess("/usr/bin/python3", [TestPaths.repoRoot + "/Tests/gnome/leave_overview.py"], env: environment)
        guard leave.code == 0 else { throw TestFailure("could not leave GNOME's overview: \(leave.stdout)\(leave.stderr)") }
    }

    /// The monitors' connectors in screenIndex order: by position, left to right, as Mutter laid
    /// them out (it puts the largest, its primary, at 0,0, whatever the order they were made in).
    func connectorsByPosition() throws -> [String] {
        let r = try runProcess("/usr/bin/gdbus", ["call", "--session", "-d", "org.gnome.Mutter.DisplayConfig", "-o", "/org/gnome/Mutter/DisplayConfig",
                                                 "-m", "org.gnome.Mutter.DisplayConfig.GetCurrentState"], env: environment)
        // Logical monitors read "(x, y, scale, transform, primary, [('Meta-N', …".
        let pattern = try NSRegularExpression(pattern: #"\((\d+), (\d+), [0-9.]+, (?:uint32 )?\d+, (?:true|false), \[\('([^']+)'"#)
        let text = r.stdout as NSString
        let found = pattern.matches(in: r.stdout, range: NSRange(location: 0, length: text.length)).map { m in
            (x: Int(text.substring(with: m.range(at: 1))) ?? 0, y: Int(text.substring(with: m.range(at: 2))) ?? 0, name: text.substring(with: m.range(at: 3)))
        }
        guard found.count == monitors.count else { throw TestFailure("cannot read GNOME's monitor layout: \(r.stdout)\(r.stderr)") }
        return found.sorted { ($0.x, $0.y, $0.name) < ($1.x, $1.y, $1.name) }.map(\.name)
    }

    /// The input log of the probe window on `connector`.
    func log(_ connector: String) -> String { dir + "/input-\(connector).log" }

    /// Lines the probe window on `connector` has logged so far.
    func logged(_ connector: String) -> [String] {
        ((try? String(contentsOfFile: log(connector), encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    private func openWindow(on connector: String, rgb: String) throws {
        let w = try BackgroundProcess("/usr/bin/python3", [TestPaths.repoRoot + "/Tests/gnome/probe_window.py", "--connector", connector,
                                                          "--colour", String(rgb.dropFirst()), "--log", log(connector)], env: environment)
        windows.append(w)
        guard waitUntil(timeout: 20, { self.logged(connector).contains { $0.hasPrefix("READY") } }) else {
            throw TestFailure("the probe window on \(connector) did not appear: \(w.log.suffix(2000))")
        }
    }

    func hasOwner(_ name: String) -> Bool { SessionBuses.hasOwner(name, on: sessionBus) }

    /// Whether the desktop portal with GNOME's backend can be started (`startPortal`).
    static var portalAvailable: Bool {
        ["/usr/libexec/xdg-desktop-portal", "/usr/libexec/xdg-desktop-portal-gnome", "/usr/libexec/xdg-permission-store"]
            .allSatisfy { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// Starts the desktop portal as a GNOME session has it: the permission store (where the
    /// portal keeps screen-share approvals), GNOME's backend (its dialogs), then the portal itself,
    /// each by its PID (the session bus activates nothing). Returns once the portal offers screen casts.
    func startPortal() throws {
        for program in ["/usr/libexec/xdg-permission-store", "/usr/libexec/xdg-desktop-portal-gnome"] {
            processes.append(try BackgroundProcess(program, ["--replace"], env: environment))
        }
        guard waitUntil(timeout: 20, { self.hasOwner("org.freedesktop.impl.portal.PermissionStore") && self.hasOwner("org.freedesktop.impl.portal.desktop.gnome") }) else {
            throw TestFailure("the portal's permission store or GNOME backend did not start: \(processes.suffix(2).map(\.log).joined(separator: "\n"))")
        }
        processes.append(try BackgroundProcess("/usr/libexec/xdg-desktop-portal", ["--replace"], env: environment))
        let offered = waitUntil(timeout: 20) {
            let r = try? runProcess("/usr/bin/gdbus", ["call", "--session", "-d", "org.freedesktop.portal.Desktop", "-o", "/org/freedesktop/portal/desktop",
                                                      "-m", "org.freedesktop.DBus.Properties.Get", "org.freedesktop.portal.ScreenCast", "version"], env: self.environment)
            return r?.code == 0
        }
        guard offered else { throw TestFailure("xdg-desktop-portal did not offer screen casts: \(processes.last?.log ?? "")") }
    }


    func stop() {
        for w in windows.reversed() { _ = w.stop() }
        windows = []
        for p in processes.reversed() { _ = p.stop() }
        processes = []
        try? FileManager.default.removeItem(atPath: dir)
    }
}
