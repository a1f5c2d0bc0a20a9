import Config
import Glibc
import HostPresence
import Kit
import Registry
import Store
import Support

/// `openclaw-node service install|uninstall [--user|--system]`: a systemd unit that runs the daemon,
/// restarts it on failure, logs to journald (stderr), and is hardened without losing the devices
/// the capabilities need (video, framebuffer, the X socket, gpsd over TCP).
enum ServiceCommand {
    static let help = """
        Usage: openclaw-node service install [--user|--system] [--config FILE] [--unit-dir DIR]
               openclaw-node service uninstall [--user|--system] [--unit-dir DIR]
               openclaw-node service unit [--user|--system] [--packaged] [--config FILE]

        install writes openclaw-node.service (user unit in ~/.config/systemd/user by default;
        --system writes /etc/systemd/system and runs as the invoking user's account) and prints the
        systemctl commands to enable it. The config path is made absolute so the unit does not
        depend on the working directory.

        unit prints a unit instead of writing it: the same text install writes, or with --packaged
        the Debian package's units (system: account openclaw-node, config
        /etc/openclaw-node/config.json5, state in /var/lib/openclaw-node; --user: the user unit).
        Every unit is Type=notify with a watchdog, reloads with `systemctl reload` (SIGHUP), and
        a system unit sees only the video, framebuffer, sound and input devices.
        """

    static let unitName = "openclaw-node.service"

    static func main(_ args: [String]) throws -> Int32 {
        let a = try Arguments(args, valued: ["config", "unit-dir"], known: ["user", "system", "packaged"])
        if a.flag("help") { Out.line(help); return ExitCode.ok.rawValue }
        guard let action = a.positionals.first, ["install", "uninstall", "unit"].contains(action) else {
            throw Arguments.Failure(description: "expected install, uninstall or unit")
        }
        if a.flag("user") && a.flag("system") { throw Arguments.Failure(description: "choose --user or --system, not both") }
        if a.flag("packaged") && action != "unit" {
            throw Arguments.Failure(description: "--packaged only prints the package's unit (service unit --packaged); the package installs it")
        }
        let system = a.flag("system")
        let env = ProcessEnvironment.current
        let dir = a.option("unit-dir") ?? (system ? "/etc/systemd/system"
            : (env["XDG_CONFIG_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? NodeConfig.expandHome("~/.config", env)) + "/systemd/user")
        let unitPath = dir + "/" + unitName
        let ctl = system ? "systemctl" : "systemctl --user"

        if action == "uninstall" {
            guard FileSystem.exists(unitPath) else {
                Out.line("\(unitPath) is not installed"); return ExitCode.ok.rawValue
            }
            try FileSystem.remove(unitPath)
            Out.line("removed \(unitPath)\nrun: \(ctl) disable --now openclaw-node; \(ctl) daemon-reload")
            return ExitCode.ok.rawValue
        }

        let binary = absolute(CommandLine.arguments[0])
        if a.flag("packaged") {
            // The package's files: /usr/bin/openclaw-node; the system unit reads the conffile.
            Out.line(a.flag("user") ? ServiceUnit(binary: "/usr/bin/openclaw-node", config: nil, kind: .user, packaged: true).text
                     : ServiceUnit(binary: "/usr/bin/openclaw-node", config: "/etc/openclaw-node/config.json5", kind: .packagedSystem, packaged: true).text)
            return ExitCode.ok.rawValue
        }
        // A user unit without --config keeps the daemon's own lookup (XDG, then /etc).
        let configPath = (system || a.option("config") != nil) ? ConfigLoader.resolvePath(explicit: a.option("config")).map(absolute) : nil
        let config = try CLI.loadConfig(a)
        let unit = ServiceUnit(binary: binary, config: configPath,
                               kind: system ? .system(account: env["SUDO_USER"] ?? env["USER"] ?? "root", stateDir: config.stateDir) : .user).text
        if action == "unit" { Out.line(unit); return ExitCode.ok.rawValue }
        try FileSystem.createDirectory(dir, intermediates: true)
        try FileSystem.write(Array(unit.utf8), to: unitPath, mode: 0o644)
        Out.line("wrote \(unitPath)\nrun: \(ctl) daemon-reload && \(ctl) enable --now openclaw-node\nlogs: journalctl \(system ? "" : "--user ")-u openclaw-node -f")
        return ExitCode.ok.rawValue
    }

    static func absolute(_ p: String) -> String {
        if p.hasPrefix("/") { return p }
        if !p.contains("/"), let found = Subprocess.findExecutable(p) { return found }
        return FileSystem.currentDirectory + "/" + p
    }
}
