import Config
import ControlLink
import ControlSocket
import Kit
import NodeDaemon
import Registry
import Support
import Transport

/// A subcommand a bundle's manifest declares (`cli`), such as the system bundle's `approvals`:
/// `--help` comes from the manifest; anything else loads that bundle (enabled for the call even if
/// the config has it off, so its data can be prepared first) and hands it the arguments and a way
/// to run its own commands through the node's dispatcher.
enum BundleCommand {
    static func main(_ manifest: BundleManifest, _ command: BundleManifest.CLICommand, _ args: [String],
                     capabilities: CLI.CapabilityFactory) async throws -> Int32 {
        let a = try Arguments(args, valued: ["config"], known: [], ignoringUnknown: true)
        if a.flag("help") || args.isEmpty { Out.line(command.help); return args.isEmpty ? ExitCode.usage.rawValue : ExitCode.ok.rawValue }
        var config = try CLI.loadConfig(a)
        config.capabilities[manifest.name]?.enabled = true
        guard case .success(let exports) = BundleLoader.load(manifest), let cli = exports.cli else {
            Out.err("openclaw-node \(command.name): the \(manifest.name) bundle cannot serve it (\(manifest.library ?? manifest.name) is missing, refused or has no CLI); see openclaw-node doctor")
            return ExitCode.failure.rawValue
        }
        let presence = NodeRuntime.presenceMonitor(config)
        let runtime = try await NodeRuntime(config: config, capabilities: try capabilities(config, presence), presence: presence)
        let dispatcher = runtime.dispatcher
        let context = BundleCLIContext(invoke: { command, params in
            await dispatcher.invoke(id: "cli-\(manifest.name)-" + SecureRandom.uuid(), command: command, params: InvokeParams(params),
                                    timeoutMs: 30_000, maxPayloadBytes: ControlProtocol.maxPayloadBytes)
        }, query: { request in
            guard let q = runtime.registry.entry(forCapability: manifest.name)?.capability.controlQueryable else {
                return .failure(.unavailable("the \(manifest.name) capability answers no queries"))
            }
            return await q.controlQuery(request)
        }, daemon: daemonAccess(stateDir: config.stateDir, capability: manifest.name),
           commands: { runtime.registry.entries.filter(\.advertised).flatMap(\.commands).map(\.row) },
           section: config.capability(manifest.name), stateDirectory: PathName.join(config.stateDir, manifest.name),
           tls: TLSServerIdentities(), printLine: { Out.line($0) }, printError: { Out.err($0) })
        let code = await cli(command.name, args, context)
        await runtime.shutdown()
        return code
    }

    /// The running daemon over its control socket (one connection per call), or nil when none answers.
    static func daemonAccess(stateDir: String, capability: String) -> DaemonAccess? {
        guard ControlClient.connect(stateDir: stateDir) != nil else { return nil }
        @Sendable func ask(_ req: JSONValue, _ key: String) async -> Result<JSONValue, NodeError> {
            // Cancelling the task raises the job's flag: the request's connection is closed and
            // the daemon cancels the command.
            await BlockingExecutor.run("control-client") { (flag: CancelFlag) -> Result<JSONValue, NodeError> in
                guard let client = ControlClient.connect(stateDir: stateDir) else { return .failure(.unavailable("the daemon stopped")) }
                do throws(ControlClient.Failure) {
                    let reply = try client.request(req, cancel: flag)
                    if reply["ok"]?.boolValue == true { return .success(reply[key] ?? .null) }
                    return .failure(NodeError(json: reply["error"]) ?? .unavailable("malformed reply from the daemon"))
                } catch {
                    return .failure(flag.isCancelled ? NodeError(.cancelled, "cancelled by the caller") : .unavailable(error.description))
                }
            }
        }
        return DaemonAccess(invoke: { command, params, timeoutMs in
            var req: [String: JSONValue] = ["op": "invoke", "command": .string(command), "params": params]
            if let timeoutMs { req["timeoutMs"] = .number(Double(timeoutMs)) }
            return await ask(.object(req), "payload")
        }, query: { request in
            await ask(["op": "capability", "name": .string(capability), "request": request], "reply")
        }, commands: {
            guard case .success(let names) = await ask(["op": "commands"], "commands") else { return nil }
            return names.arrayValue?.compactMap(\.stringValue)
        })
    }
}
