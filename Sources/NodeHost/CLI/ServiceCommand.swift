import Config
import FoundationEssentials
import Glibc
import HostPresence
import Kit
import Registry
import Runtime
import Store
import Support

/// `openclaw-node service install|uninstall [--user|--system]`: a systemd unit that runs the daemon,
/// restarts it on failure, logs to journald (stderr), and is hardened without losing the devices
/// the capabilities need (video, framebuffer, the X socket, gpsd over TCP).
enum ServiceCommand {
    static let help = """
        Usage: openclaw-node service install [--user|--system] [--config FILE] [--unit-dir DIR]
               openclaw-node service uninstall [--user|--system] [--unit-dir DIR]

        install writes openclaw-node.service (user unit in ~/.config/systemd/user by default;
        --system writes /etc/systemd/system and runs as the invoking user's account) and prints the
        systemctl commands to enable it. The config path is made absolute so the unit does not
        depend on the working directory.
        """

    static let unitName = "openclaw-node.service"

    static func main(_ args: [String]) throws -> Int32 {
        let a = try Arguments(args, valued: ["config", "unit-dir"], known: ["user", "system"])
        if a.flag("help") { Out.line(help); return ExitCode.ok.rawValue }
        guard let action = a.positionals.first, ["install", "uninstall"].contains(action) else {
            throw Arguments.Failure(description: "expected install or uninstall")
        }
        if a.flag("user") && a.flag("system") { throw Arguments.Failure(description: "choose --user or --system, not both") }
        let system = a.flag("system")
        let env = ProcessInfo.processInfo.environment
        let dir = a.option("unit-dir") ?? (system ? "/etc/systemd/system"
            : (env["XDG_CONFIG_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? NodeConfig.expandHome("~/.config", env)) + "/systemd/user")
        let unitPath = dir + "/" + unitName
        let ctl = system ? "systemctl" : "systemctl --user"

        if action == "uninstall" {
            guard FileManager.default.fileExists(atPath: unitPath) else {
                Out.line("\(unitPath) is not installed"); return ExitCode.ok.rawValue
            }
            try FileManager.default.removeItem(atPath: unitPath)
            Out.line("removed \(unitPath)\nrun: \(ctl) disable --now openclaw-node; \(ctl) daemon-reload")
            return ExitCode.ok.rawValue
        }

        let configPath = ConfigLoader.resolvePath(explicit: a.option("config")).map(absolute)
        let config = try CLI.loadConfig(a)
        let unit = unitText(binary: absolute(CommandLine.arguments[0]), config: configPath, stateDir: config.stateDir,
                            system: system, user: env["SUDO_USER"] ?? env["USER"] ?? "root")
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        try unit.write(toFile: unitPath, atomically: true, encoding: .utf8)
        Out.line("wrote \(unitPath)\nrun: \(ctl) daemon-reload && \(ctl) enable --now openclaw-node\nlogs: journalctl \(system ? "" : "--user ")-u openclaw-node -f")
        return ExitCode.ok.rawValue
    }

    static func absolute(_ p: String) -> String {
        if p.hasPrefix("/") { return p }
        if !p.contains("/"), let found = Subprocess.findExecutable(p) { return found }
        return FileManager.default.currentDirectoryPath + "/" + p
    }

    static func unitText(binary: String, config: String?, stateDir: String, system: Bool, user: String) -> String {
        let exec = "\(binary) run" + (config.map { " --config \($0)" } ?? "")
        var lines = [
            "[Unit]",
            "Description=OpenClaw node (openclaw-node): this device's camera, screen, location and canvas for OpenClaw agents",
            "Wants=network-online.target",
            "After=network-online.target",
            "",
            "[Service]",
            // READY=1 once the control socket serves, STATUS= as the connection changes, and
            // WATCHDOG=1 from the runtime's loop: a wedged node is restarted.
            "Type=notify",
            "WatchdogSec=30",
            "ExecStart=\(exec)",
            "Restart=on-failure",
            "RestartSec=5",
            // SIGTERM: the node releases plugins, browser and camera, then exits 0.
            "KillSignal=SIGTERM",
            "TimeoutStopSec=20",
            "Environment=OPENCLAW_NODE_LOG=info",
            "NoNewPrivileges=yes",
            "PrivateTmp=yes",
            "ProtectKernelTunables=yes",
            "ProtectKernelModules=yes",
            "ProtectControlGroups=yes",
            "RestrictSUIDSGID=yes",
            "LockPersonality=yes",
            // AF_NETLINK: network-change detection; AF_UNIX: X11, D-Bus, control socket.
            "RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6 AF_NETLINK",
        ]
        if system {
            lines += [
                "User=\(user)",
                // Cameras and the framebuffer stay reachable; everything else under /dev does not.
                "SupplementaryGroups=video",
                "DevicePolicy=closed",
                "DeviceAllow=char-video4linux rw",
                "DeviceAllow=/dev/fb0 rw",
                "DeviceAllow=char-alsa rw",
                "ProtectSystem=strict",
                "ProtectHome=read-only",
                "ReadWritePaths=\(stateDir)",
            ]
        }
        lines += ["", "[Install]", "WantedBy=\(system ? "multi-user.target" : "default.target")", ""]
        return lines.joined(separator: "\n")
    }
}
