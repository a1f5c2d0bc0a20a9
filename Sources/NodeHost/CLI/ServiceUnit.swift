/// The systemd unit that runs the daemon, in its three forms: the Debian package's system unit
/// (a dedicated `openclaw-node` account, state in /var/lib/openclaw-node), the package's user unit,
/// and what `service install` writes for a node built from source. One generator for all three,
/// so the package and `service install` cannot drift apart.
struct ServiceUnit {
    enum Kind {
        /// The package's system service: account `openclaw-node`, `StateDirectory=`.
        case packagedSystem
        /// A system service for a source build, running as `account` with its own stateDir.
        case system(account: String, stateDir: String)
        /// A user service (`systemctl --user`).
        case user
    }

    let binary: String
    /// nil: the daemon's own lookup (XDG config, then /etc/openclaw-node/config.json5).
    let config: String?
    let kind: Kind
    /// Installed with the package, whose man page the unit can point to.
    var packaged = false

    static let packagedAccount = "openclaw-node"

    var text: String {
        let exec = "\(binary) run" + (config.map { " --config \($0)" } ?? "")
        var lines = [
            "[Unit]",
            "Description=OpenClaw node: this device's camera, screen, location, canvas and more for OpenClaw agents",
            "Wants=network-online.target",
            "After=network-online.target",
        ] + (packaged ? ["Documentation=man:openclaw-node(1)"] : []) + [
            "",
            "[Service]",
            // READY=1 once the control socket serves, STATUS= as the connection changes, and
            // WATCHDOG=1 from the runtime's loop: a wedged node is restarted.
            "Type=notify",
            "WatchdogSec=30",
            "ExecStart=\(exec)",
            // SIGHUP re-reads the config; the gateway session survives what it does not concern.
            "ExecReload=/bin/kill -HUP $MAINPID",
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
        // A system service sees only the devices its capabilities use: cameras, framebuffers,
        // sound cards and input devices (presence); the groups that own them on Debian.
        let devices = [
            "SupplementaryGroups=video audio input",
            "DevicePolicy=closed",
            "DeviceAllow=char-video4linux rw",
            "DeviceAllow=char-fb rw",
            "DeviceAllow=char-alsa rw",
            "DeviceAllow=char-input r",
            "ProtectSystem=strict",
        ]
        switch kind {
        case .packagedSystem:
            lines += ["User=\(Self.packagedAccount)", "Group=\(Self.packagedAccount)"] + devices + [
                // /var/lib/openclaw-node, owned by the account, private: the device key lives there.
                "StateDirectory=openclaw-node",
                "StateDirectoryMode=0700",
                "ProtectHome=yes",
            ]
        case .system(let account, let stateDir):
            lines += ["User=\(account)"] + devices + ["ProtectHome=read-only", "ReadWritePaths=\(stateDir)"]
        case .user:
            break
        }
        let target: String
        if case .user = kind { target = "default.target" } else { target = "multi-user.target" }
        lines += ["", "[Install]", "WantedBy=\(target)", ""]
        return lines.joined(separator: "\n")
    }
}
