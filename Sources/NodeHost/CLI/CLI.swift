import Config
import ControlLink
import GatewaySession
import Glibc
import HostPresence
import Kit
import NodeDaemon
import Registry
import Store
import Support

/// `openclaw-node` command line: parses arguments and prints. The executable is a one-line `main`;
/// capabilities come from the built-in device capability, plugins and the bundles config enables.
public enum CLI {
    public typealias CapabilityFactory = NodeRuntime.CapabilityFactory

    /// The command table: `--help`, the man page and the bash completion are all made from it:
    /// the core's commands, then the subcommands installed bundles declare in their manifests.
    static var commands: [(name: String, summary: String, help: String)] {
        coreCommands + bundleCommands.map { ($0.command.name, $0.command.summary, $0.command.help) }
    }

    static var bundleCommands: [(manifest: BundleManifest, command: BundleManifest.CLICommand)] {
        BundleCatalog.current.manifests.flatMap { m in m.cli.map { (m, $0) } }
    }

    static let coreCommands: [(name: String, summary: String, help: String)] = [
        ("run", "run the node daemon (connects to the gateway, serves the control socket)", RunCommand.help),
        ("invoke", "run one command through the node's dispatcher and print its payload", InvokeCommand.help),
        ("caps", "show the capabilities and commands this node advertises", CapsCommand.help),
        ("status", "show device id, state directory, gateways and pairing state", StatusCommand.help),
        ("discover", "list the gateways found on the LAN (avahi) and by wide-area DNS-SD", DiscoverCommand.help),
        ("config check", "validate a config file and its drop-ins; config show --origin: which file set each key", ConfigCommand.help),
        ("presence", "set foreground/background on the running daemon", PresenceCommand.help),
        ("pair", "pair with a gateway from a setup code, oc-pair:// link or one-time join URL", PairCommand.help),
        ("provision", "first-boot set-up from a file on the boot partition (gateway, name, setup code)", ProvisionCommand.help),
        ("restart", "restart the running daemon once nothing runs (after an upgrade), same identity and token", RestartCommand.help),
        ("update", "upgrade this package from its own apt source (the update timer runs it: node.autoUpdate)", UpdateCommand.help),
        ("reconnect", "make the running daemon connect again now (resumes a paused reconnect)", ReconnectCommand.help),
        ("doctor", "check config, state, capabilities and the gateway; say what the gateway allows", DoctorCommand.help),
        ("service", "install or remove a systemd unit that runs the node", ServiceCommand.help),
        ("completion", "print the bash completion script (source <(openclaw-node completion bash))", CompletionCommand.help),
    ]

    /// What runs before the async main starts any thread, on the main thread alone: nil for any
    /// other command line. The process-tree helper of system.run (not listed in --help), so that the
    /// signals it waits for are blocked in every thread it will ever have; and `invoke` answered by
    /// a running daemon, which needs no threads at all.
    public static func synchronousMain(_ args: [String]) -> Int32? {
        if args.first == ProcessTreeReaper.subcommand { return ProcessTreeReaper.main(Array(args.dropFirst())) }
        guard args.first == "invoke" else { return nil }
        signal(SIGPIPE, SIG_IGN)
        NodeSecrets.withhold()
        return DaemonInvoke.viaDaemon(Array(args.dropFirst()))
    }

    public static func main(_ args: [String],
                            capabilities: @escaping CapabilityFactory = NodeRuntime.capabilities(config:presence:)) async -> Int32 {
        signal(SIGPIPE, SIG_IGN)
        // Before anything can start a child: the gateway credentials leave the environment.
        NodeSecrets.withhold()
        guard let first = args.first else { Out.line(usage); return ExitCode.usage.rawValue }
        let rest = Array(args.dropFirst())
        do {
            switch first {
            case "run": return try await RunCommand.main(rest, capabilities: capabilities)
            case HelperSubcommand.videoEncoder: return VideoEncoderCommand.main(rest)
            case "invoke": return try await InvokeCommand.main(rest, capabilities: capabilities)
            case "caps": return try await CapsCommand.main(rest, capabilities: capabilities)
            case "status": return try await StatusCommand.main(rest)
            case "discover": return try await DiscoverCommand.main(rest)
            case "config": return try ConfigCommand.main(rest)
            case "presence": return try PresenceCommand.main(rest)
            case "reconnect": return try ReconnectCommand.main(rest)
            case "provision": return try ProvisionCommand.main(rest)
            case "restart": return try RestartCommand.main(rest)
            case "update": return try UpdateCommand.main(rest)
            case "pair": return try await PairCommand.main(rest, capabilities: capabilities)
            case "doctor": return try await DoctorCommand.main(rest, capabilities: capabilities)
            case "service": return try ServiceCommand.main(rest)
            case "completion": return try CompletionCommand.main(rest)
            case "help" where rest.first == "--man": Out.line(ManPage.text); return ExitCode.ok.rawValue
            case "help", "--help", "-h":
                if let topic = rest.first { return await main([topic, "--help"], capabilities: capabilities) }
                Out.line(usage); return ExitCode.ok.rawValue
            case "--version", "version": Out.line(versionText); return ExitCode.ok.rawValue
            default:
                if let (manifest, command) = bundleCommands.first(where: { $0.command.name == first }),
                   !coreCommands.contains(where: { $0.name == first }) {
                    return try await BundleCommand.main(manifest, command, rest, capabilities: capabilities)
                }
                let hint = Suggest.closest(to: first, in: commands.map { String($0.name.split(separator: " ")[0]) })
                Out.err("openclaw-node: unknown command \"\(first)\"\(hint.map { " (did you mean \($0)?)" } ?? ""). See openclaw-node --help")
                return ExitCode.usage.rawValue
            }
        } catch let e as ConfigLoader.Failure {
            // A capability's section, checked when its bundle loaded.
            Out.err("openclaw-node \(first): invalid config:\n\(e.description)\n(run `openclaw-node config check` for every problem)")
            return ExitCode.failure.rawValue
        } catch let e as Arguments.Failure {
            Out.err("openclaw-node \(first): \(e.description). See openclaw-node \(first) --help")
            return ExitCode.usage.rawValue
        } catch {
            Out.err("openclaw-node \(first): \(error)")
            return ExitCode.failure.rawValue
        }
    }

    /// `--version`: the version, the protocol range spoken, and the bundles this installation has.
    static var versionText: String {
        var lines = ["openclaw-node \(NodeVersion.version) (build \(NodeVersion.build), commit \(buildCommit ?? "unknown"), bundle ABI \(BundleLoader.abi))",
                     "gateway protocol \(GatewayProtocol.minProtocol)–\(GatewayProtocol.maxProtocol)"]
        let catalog = BundleCatalog.current
        let found = catalog.bundles
        lines.append("bundles: " + (found.isEmpty ? "none found in \(BundleCatalog.searchDirectories.joined(separator: ", "))"
                                                  : found.map { "\($0.name) (\(PathName.directory($0.file)))" }.joined(separator: ", ")))
        for r in catalog.refused { lines.append("refused: \(r.reason)") }
        return lines.joined(separator: "\n")
    }

    /// The source commit, from `openclaw-node.commit` beside the bundles: scripts/build writes it
    /// (a file, so that a new commit does not rebuild every module), scripts/package ships it.
    static var buildCommit: String? {
        for dir in BundleCatalog.searchDirectories {
            if let text = FileSystem.readText(PathName.join(dir, "openclaw-node.commit")) {
                let c = text.trimmed()
                if !c.isEmpty { return c }
            }
        }
        return nil
    }

    static var usage: String {
        """
        openclaw-node \(NodeVersion.version) — turns this Linux device into an OpenClaw node.

        Usage: openclaw-node <command> [options]

        Commands:
        \(commands.map { "  \($0.name.padded(to: 14)) \($0.summary)" }.joined(separator: "\n"))

        Every command takes --config FILE and --help. Without --config: the first that exists of
        $XDG_CONFIG_HOME/openclaw-node/config.json5 (~/.config/…) and /etc/openclaw-node/config.json5,
        else built-in defaults (never ./config.json5: pass --config config.json5 for the repo's).
        Drop-ins: config.d/*.json5 beside that file, merged over it in name order (config --help).

        Environment: OPENCLAW_GATEWAY_URL, OPENCLAW_GATEWAY_TOKEN, OPENCLAW_GATEWAY_PASSWORD override the
        config file; OPENCLAW_WIDE_AREA_DOMAIN is used when gateway.discovery.wideAreaDomain is not set;
        OPENCLAW_NODE_LOG=debug|info|warn|error sets the log level.
        """
    }

    /// Loads the config named by --config (or the default location), printing a clear error.
    static func loadConfig(_ a: Arguments) throws -> NodeConfig {
        let path = ConfigLoader.resolvePath(explicit: a.option("config"))
        do { return try ConfigLoader.load(path: path) }
        catch { throw CLIError(message: "invalid config:\n\(error.description)\n(run `openclaw-node config check \(path ?? "")` for details)") }
    }
}

struct CLIError: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}
