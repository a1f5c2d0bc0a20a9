import Foundation
@testable import Support

/// Debian's KWin (Plasma 5.27) started headless for one test (`kwin_wayland --virtual`), in a
/// private session: its own session bus without service directories, a stand-in system bus,
/// XDG_RUNTIME_DIR, HOME, caches and data directories. With `grant`, the package's own desktop
/// entry (scripts/debian/ai.openclaw.node.desktop), pointed at the built binary, grants it KWin's
/// restricted interfaces (ScreenShot2, fake input), and kbuildsycoca5 indexes it before KWin starts.
/// kwin_wayland carries cap_sys_resource, which this machine's bounding set lacks: an untagged copy
/// runs instead. A GTK 4 probe window (Tests/gnome/probe_window.py) shows one colour fullscreen.
/// Every process is stopped by its PID.
final class KWinSession: @unchecked Sendable {
    let dir: String
    let runtimeDir: String
    let sessionBus: String
    let socket = "wayland-0"
    private var processes: [BackgroundProcess] = []

    static var available: Bool {
        getuid() == 0 && ["/usr/bin/kwin_wayland", "/usr/bin/kbuildsycoca5", "/usr/bin/dbus-daemon", "/usr/bin/dbus-send"]
            .allSatisfy { FileManager.default.isExecutableFile(atPath: $0) } && GnomeShell.available
    }

    var environment: [String: String] {
        ["XDG_RUNTIME_DIR": runtimeDir, "HOME": dir + "/home", "XDG_CACHE_HOME": dir + "/cache", "XDG_CONFIG_HOME": dir + "/home/.config",
         "XDG_DATA_DIRS": dir + "/share:/usr/share", "DBUS_SESSION_BUS_ADDRESS": sessionBus,
         "DBUS_SYSTEM_BUS_ADDRESS": "unix:path=\(runtimeDir)/system_bus", "WAYLAND_DISPLAY": socket,
         "XDG_CURRENT_DESKTOP": "KDE", "XDG_SESSION_TYPE": "wayland", "NO_AT_BRIDGE": "1", "GTK_A11Y": "none",
         "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"]
    }

    /// One virtual output of `width`x`height` showing `rgb`; `grant`: the node's binary may take
    /// screenshots and send input.
    init(width: Int, height: Int, rgb: String, grant: Bool = true) throws {
        dir = TestPaths.tempDir("kwin")
        runtimeDir = dir + "/run"
        sessionBus = "unix:path=\(dir)/run/bus"
        for sub in ["run", "home/.config", "cache", "share/applications", "bin"] {
            try FileManager.default.createDirectory(atPath: dir + "/" + sub, withIntermediateDirectories: true)
        }
        chmod(runtimeDir, 0o700)
        do {
            try start(width: width, height: height, rgb: rgb, grant: grant)
        } catch {
            stop()
            throw error
        }
    }

    private func start(width: Int, height: Int, rgb: String, grant: Bool) throws {
        if grant {
            // The package's own entry, with Exec= the built binary instead of the installed one:
            // what is tested is the grant the package ships.
            let exe = URL(fileURLWithPath: TestPaths.nodeBinary).resolvingSymlinksInPath().path
            let shipped = try String(contentsOfFile: TestPaths.repoRoot + "/scripts/debian/ai.openclaw.node.desktop", encoding: .utf8)
            guard shipped.contains("\nExec=/usr/lib/openclaw-node/openclaw-node\n") else { throw TestFailure("the package's grant does not name /usr/lib/openclaw-node/openclaw-node") }
            try shipped.replacingOccurrences(of: "\nExec=/usr/lib/openclaw-node/openclaw-node\n", with: "\nExec=\(exe)\n")
                .write(toFile: dir + "/share/applications/ai.openclaw.node.desktop", atomically: false, encoding: .utf8)
        }
        // KWin looks grants up in KDE's service cache: built first, or its first lookup rebuilds it.
        let sycoca = try runProcess("/usr/bin/kbuildsycoca5", ["--noincremental"], env: environment, timeout: 60)
        guard sycoca.code == 0 else { throw TestFailure("kbuildsycoca5 failed: \(sycoca.stderr)") }
        try SessionBuses.start(runtimeDir: runtimeDir, configDir: dir, environment: environment, into: &processes)
        // cp drops the file capability the packaged binary carries.
        _ = try runProcess("/bin/cp", ["/usr/bin/kwin_wayland", dir + "/bin/kwin_wayland"])
        let kwin = try BackgroundProcess(dir + "/bin/kwin_wayland", ["--virtual", "--width", String(width), "--height", String(height),
                                                                     "--no-lockscreen", "--socket", socket], env: environment)
        processes.append(kwin)
        guard waitUntil(timeout: 30, { FileManager.default.fileExists(atPath: self.runtimeDir + "/" + self.socket) && self.hasOwner("org.kde.KWin") }) else {
            throw TestFailure("kwin_wayland did not start:\n\(kwin.log.suffix(3000))")
        }
        let log = dir + "/input.log"
        let window = try BackgroundProcess("/usr/bin/python3", [TestPaths.repoRoot + "/Tests/gnome/probe_window.py", "--connector", "Virtual-0",
                                                                "--colour", String(rgb.dropFirst()), "--log", log], env: environment)
        processes.append(window)
        guard waitUntil(timeout: 20, { ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").contains("READY") }) else {
            throw TestFailure("the probe window did not appear on KWin: \(window.log.suffix(2000))")
        }
    }

    /// Lines the probe window has logged so far.
    var logged: [String] {
        ((try? String(contentsOfFile: dir + "/input.log", encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    func hasOwner(_ name: String) -> Bool { SessionBuses.hasOwner(name, on: sessionBus) }

    func stop() {
        for p in processes.reversed() { _ = p.stop() }
        processes = []
        try? FileManager.default.removeItem(atPath: dir)
    }
}
