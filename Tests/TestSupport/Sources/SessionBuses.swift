import Foundation
@testable import Support

/// The two buses of a private desktop session for one test: a session bus without service
/// directories (nothing is activated behind the test's back) and a stand-in system bus (GNOME
/// Shell and KWin exit at start without one), both in the session's runtime directory.
enum SessionBuses {
    /// Starts both daemons (their processes are appended to `processes`, for stopping by PID).
    /// `sessionPolicy`: more <policy> rules for the session bus (a desktop refusing one account).
    static func start(runtimeDir: String, configDir: String, environment: [String: String], sessionPolicy: String = "",
                      into processes: inout [BackgroundProcess]) throws {
        for (name, socket) in [("session", "bus"), ("system", "system_bus")] {
            let conf = configDir + "/\(name).conf"
            try """
                <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
                 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
                <busconfig><type>session</type><listen>unix:path=\(runtimeDir)/\(socket)</listen><auth>EXTERNAL</auth>
                <policy context="default"><allow user="*"/><allow own="*"/><allow send_destination="*"/><allow receive_sender="*"/></policy>
                \(name == "session" ? sessionPolicy : "")</busconfig>
                """.write(toFile: conf, atomically: false, encoding: .utf8)
            processes.append(try BackgroundProcess("/usr/bin/dbus-daemon", ["--config-file=\(conf)", "--nofork", "--nopidfile"], env: environment))
            guard waitUntil(timeout: 10, { FileManager.default.fileExists(atPath: "\(runtimeDir)/\(socket)") }) else {
                throw TestFailure("dbus-daemon (\(name)) did not start")
            }
        }
    }

    /// Whether some connection owns `name` on the session bus at `address`.
    static func hasOwner(_ name: String, on address: String) -> Bool {
        guard let r = try? runProcess("/usr/bin/dbus-send", ["--bus=\(address)", "--print-reply", "--dest=org.freedesktop.DBus",
                                                             "/org/freedesktop/DBus", "org.freedesktop.DBus.NameHasOwner", "string:\(name)"]) else { return false }
        return r.stdout.contains("boolean true")
    }
}
