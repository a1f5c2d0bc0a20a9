import Config
import Kit
import Support

/// openclaw-node(1), made from the command table and each command's `--help` (`openclaw-node help
/// --man`; scripts/package installs it), so the page says what the binary does.
enum ManPage {
    static var text: String {
        var out: [String] = [
            #".TH OPENCLAW-NODE 1 "" "openclaw-node \#(NodeVersion.version)" "User Commands""#,
            ".SH NAME",
            #"openclaw-node \- turn this Linux device into an OpenClaw node"#,
            ".SH SYNOPSIS",
            ".B openclaw-node",
            ".I command",
            ".RI [ options ]",
            ".SH DESCRIPTION",
            paragraph("""
                openclaw-node pairs this device with an OpenClaw gateway and serves what the device has \
                to the gateway's agents. Each capability is a bundle that describes itself in a manifest \
                beside its library (see CAPABILITIES for the ones installed here), loaded only when the \
                config enables it; out-of-process plugins add more. Agents reach the node through the \
                gateway, for example `openclaw nodes invoke --node NAME --command device.info`.
                """),
            ".SH COMMANDS",
        ]
        for c in CLI.commands {
            out.append(".SS \(escape(c.name))")
            out.append(paragraph(c.summary))
            out += [".PP", ".nf", ".RS 4"]
            out += c.help.split(separator: "\n", omittingEmptySubsequences: false).map { escape(String($0)) }
            out += [".RE", ".fi"]
        }
        // From the installed manifests: what each capability is, its commands and its keys.
        out.append(".SH CAPABILITIES")
        for m in BundleCatalog.current.manifests {
            out.append(".SS \(escape(m.name))")
            out.append(paragraph("\(m.summary). \(m.enabledByDefault ? "On" : "Off") unless capabilities.\(m.name).enabled says otherwise."))
            out += [".PP", ".nf", ".RS 4"]
            for c in m.commands {
                let gates = [c.requiresForeground ? "foreground" : nil, c.dangerous ? "dangerous" : nil].compactMap { $0 }
                out.append(escape("\(c.name)  \(c.summary)\(gates.isEmpty ? "" : " [\(gates.joined(separator: ", "))]")"))
                out += CommandRowText.paramLines(c.params, indent: "    ").map(escape)
            }
            if !m.config.isEmpty {
                out.append(escape("capabilities.\(m.name):"))
                out += ConfigReference.text(m.config, indent: "  ").split(separator: "\n").map { escape(String($0)) }
            }
            for d in m.doctor { out.append(escape("doctor: \(d.doc)")) }
            out += [".RE", ".fi"]
        }
        out += [
            ".SH CONFIGURATION",
            paragraph("""
                The config is JSON5 (comments and trailing commas allowed). Without --config, every \
                command uses the first that exists of $XDG_CONFIG_HOME/openclaw-node/config.json5 \
                (~/.config/...) and /etc/openclaw-node/config.json5, else built-in defaults; never a file in \
                the working directory. The packaged /etc/openclaw-node/config.json5 lists every key \
                with its default. Every *.json5 in the config.d folder beside the file in use \
                (/etc/openclaw-node/config.d/, ~/.config/openclaw-node/config.d/) is merged over it in \
                name order: objects key by key, any other value replaced whole; hidden files and editor \
                backups are skipped. `openclaw-node config check` prints each problem with \
                file:line:col; `config show --origin` names the file that set each key.
                """),
            ".SH SIGNALS",
            ".TP", ".B SIGHUP",
            paragraph("""
                Re-read the config file (systemctl reload openclaw-node). Capabilities and plugins that \
                changed are restarted, the rest keep running; the gateway session stays up unless the \
                gateway settings or the node's command list changed. A config with errors is logged \
                and the running one kept.
                """),
            ".TP", ".BR SIGTERM \", \" SIGINT",
            paragraph("Stop: release devices, plugins and the browser, then exit 0."),
            ".SH ENVIRONMENT",
            ".TP", ".B OPENCLAW_GATEWAY_URL\", \"OPENCLAW_GATEWAY_TOKEN\", \"OPENCLAW_GATEWAY_PASSWORD",
            paragraph("Override gateway.url, gateway.token and gateway.password of the config."),
            ".TP", ".B OPENCLAW_WIDE_AREA_DOMAIN",
            paragraph("The wide-area DNS-SD domain when gateway.discovery.wideAreaDomain is not set."),
            ".TP", ".B OPENCLAW_NODE_LOG",
            paragraph("debug, info (default), warn or error."),
            ".TP", ".B STATE_DIRECTORY",
            paragraph("Set by systemd's StateDirectory=; the default node.stateDir when present."),
            ".SH FILES",
            ".TP", ".I /etc/openclaw-node/config.json5",
            paragraph("The system service's config (a conffile of the Debian package)."),
            ".TP", ".I /etc/openclaw-node/config.d/*.json5",
            paragraph("Drop-ins merged over it in name order (a fleet's settings, one per file)."),
            ".TP", ".I /boot/firmware/openclaw-node.json5, /boot/firmware/openclaw-node-setup.txt",
            paragraph("""
                First-boot provisioning: openclaw-node-provision.service (openclaw-node provision) moves the \
                settings into config.d/10-provisioned.json5 and the setup code into the state directory, and \
                deletes the file.
                """),
            ".TP", ".I openclaw-node-update.timer",
            paragraph("Hourly; runs openclaw-node update --if-due, which does nothing unless node.autoUpdate.enabled."),
            ".TP", ".I /var/lib/openclaw-node/",
            paragraph("""
                The system service's state: state.sqlite (the device key, gateway tokens and pins, exec \
                approvals) and control.sock. Purging the package removes it, unless a file named \
                keep-on-purge is in it. For a user: ~/.local/state/openclaw-node/.
                """),
            ".TP", ".I /usr/lib/openclaw-node/",
            paragraph("The capability bundles (libopenclaw-*.so) and the libraries they share."),
            ".TP", ".I /usr/share/openclaw-node/plugins/",
            paragraph("The plugins shipped with the package (enable them under plugins.entries)."),
            ".SH EXIT STATUS",
            paragraph("0 on success, 1 on failure, 2 on a usage error; config check: 2 syntax error, 3 invalid config."),
            ".SH SEE ALSO",
            ".BR systemctl (1),",
            ".BR journalctl (1),",
            ".BR openclaw (1)",
        ]
        return out.joined(separator: "\n")
    }

    /// Text for a filled paragraph: roff escapes, and no line starting with a control character.
    static func paragraph(_ s: String) -> String { escape(s) }

    /// Backslashes and hyphens escaped; a line that starts with `.` or `'` is protected with `\&`.
    static func escape(_ s: String) -> String {
        var t = s.replacing("\\", with: "\\e").replacing("-", with: "\\-")
        if t.hasPrefix(".") || t.hasPrefix("'") { t = "\\&" + t }
        return t
    }
}
