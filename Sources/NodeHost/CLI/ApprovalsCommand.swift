import Config
import FoundationEssentials
import Kit
import Registry
import Runtime
import Support

/// `openclaw-node approvals …`: read and edit the exec approvals document on this machine. Every
/// edit goes through the system bundle's own system.execApprovals.get/set (validation, the hash
/// check), so a change made here and one made by the gateway at the same moment cannot overwrite
/// each other: the loser is told to retry. Works whether or not the daemon runs, and whether or not
/// the system capability is enabled yet.
enum ApprovalsCommand {
    static let help = """
        Usage: openclaw-node approvals show [--json] [--config FILE]
               openclaw-node approvals allow PATTERN [--args REGEX] [--agent ID] [--config FILE]
               openclaw-node approvals remove ID [--config FILE]
               openclaw-node approvals policy [--agent ID] [--security deny|allowlist|full]
                                              [--ask off|on-miss|always] [--ask-fallback deny|allowlist|full]

        The exec approvals decide what system.run may run (README "Running commands").
          show     the document: defaults, each agent's policy and allowlist entries (with ids)
          allow    add an allowlist entry: PATTERN is a path glob ("/usr/bin/git", "~/bin/**") or a
                   bare name found on PATH ("git"); --args only when the arguments match REGEX
          remove   delete the allowlist entry with this id (see show)
          policy   set security/ask/askFallback in the defaults, or for one agent with --agent
        The agent defaults to "main" (the gateway's default agent); "*" applies to every agent.
        """

    static func main(_ args: [String], capabilities: CLI.CapabilityFactory) async throws -> Int32 {
        let a = try Arguments(args, valued: ["config", "args", "agent", "security", "ask", "ask-fallback"], known: ["json"])
        if a.flag("help") || a.positionals.isEmpty { Out.line(help); return a.flag("help") ? ExitCode.ok.rawValue : ExitCode.usage.rawValue }
        var config = try CLI.loadConfig(a)
        // The document can be prepared before system.run is switched on.
        var section = config.capability("system")
        section.enabled = true
        config.capabilities["system"] = section
        let runtime = try await NodeRuntime(config: config, capabilities: try capabilities(config))
        do {
            let code = try await run(a, Document(dispatcher: runtime.dispatcher))
            await runtime.shutdown()
            return code
        } catch {
            await runtime.shutdown()
            throw error
        }
    }

    private static func run(_ a: Arguments, _ doc: Document) async throws -> Int32 {
        switch (a.positionals[0], a.positionals.count) {
        case ("show", 1):
            let snapshot = try await doc.get()
            if a.flag("json") { Out.json(snapshot) } else { Out.line(describe(snapshot)) }
        case ("allow", 2):
            var entry: [String: JSONValue] = ["pattern": .string(a.positionals[1]), "source": "cli"]
            if let re = a.option("args") { entry["argPattern"] = .string(re) }
            let agent = a.option("agent") ?? "main"
            try await doc.edit { file in
                var agents = file["agents"]?.objectValue ?? [:]
                var one = agents[agent]?.objectValue ?? [:]
                one["allowlist"] = .array((one["allowlist"]?.arrayValue ?? []) + [.object(entry)])
                agents[agent] = .object(one)
                file["agents"] = .object(agents)
            }
            Out.line("allowed \(a.positionals[1])\(a.option("args").map { " with arguments matching /\($0)/" } ?? "") for agent \(agent)")
        case ("remove", 2):
            let id = a.positionals[1]
            var found = false
            try await doc.edit { file in
                var agents = file["agents"]?.objectValue ?? [:]
                for (name, agent) in agents {
                    guard var o = agent.objectValue, let list = o["allowlist"]?.arrayValue else { continue }
                    let kept = list.filter { $0["id"]?.stringValue != id }
                    if kept.count != list.count { found = true; o["allowlist"] = .array(kept); agents[name] = .object(o) }
                }
                file["agents"] = .object(agents)
            }
            guard found else { Out.err("openclaw-node approvals: no allowlist entry has id \(id) (see openclaw-node approvals show)"); return ExitCode.failure.rawValue }
            Out.line("removed \(id)")
        case ("policy", 1):
            let changes = [("security", a.option("security")), ("ask", a.option("ask")), ("askFallback", a.option("ask-fallback"))]
                .compactMap { k, v in v.map { (k, $0) } }
            guard !changes.isEmpty else { throw Arguments.Failure(description: "policy needs --security, --ask or --ask-fallback") }
            let agent = a.option("agent")
            try await doc.edit { file in
                func apply(_ o: JSONValue?) -> JSONValue {
                    var o = o?.objectValue ?? [:]
                    for (k, v) in changes { o[k] = .string(v) }
                    return .object(o)
                }
                if let agent {
                    var agents = file["agents"]?.objectValue ?? [:]
                    agents[agent] = apply(agents[agent])
                    file["agents"] = .object(agents)
                } else {
                    file["defaults"] = apply(file["defaults"])
                }
            }
            Out.line("\(agent.map { "agent \($0)" } ?? "defaults"): " + changes.map { "\($0.0) \($0.1)" }.joined(separator: ", "))
        default:
            throw Arguments.Failure(description: "expected show, allow PATTERN, remove ID or policy")
        }
        return ExitCode.ok.rawValue
    }

    /// The document through the dispatcher, as the gateway sees it.
    struct Document {
        let dispatcher: Dispatcher

        func call(_ command: String, _ params: JSONValue) async throws -> JSONValue {
            switch await dispatcher.invoke(id: "cli-approvals", command: command, params: InvokeParams(params), timeoutMs: 30_000,
                                           maxPayloadBytes: ControlProtocol.maxPayloadBytes) {
            case .success(let v): return v
            case .failure(let e): throw CLIError(e.message)
            }
        }

        func get() async throws -> JSONValue { try await call("system.execApprovals.get", [:]) }

        /// Read, change, write with the hash read; the bundle refuses the write if anything changed in between.
        func edit(_ change: (inout [String: JSONValue]) -> Void) async throws {
            let snapshot = try await get()
            var file = snapshot["file"]?.objectValue ?? [:]
            let before = file
            change(&file)
            if file == before { return }
            _ = try await call("system.execApprovals.set", ["file": .object(file), "baseHash": snapshot["hash"] ?? .null])
        }
    }

    struct CLIError: Error, CustomStringConvertible { let description: String; init(_ d: String) { description = d } }

    static func describe(_ s: JSONValue) -> String {
        var lines = ["exec approvals: \(s["path"]?.stringValue ?? "?")" + (s["exists"] == true ? "" : " (not set yet: built-in defaults full/off)"),
                     "hash \(s["hash"]?.stringValue ?? "?")"]
        func policy(_ o: JSONValue?) -> String {
            let parts = ["security", "ask", "askFallback"].compactMap { k in o?[k]?.stringValue.map { "\(k) \($0)" } }
            return parts.isEmpty ? "(inherited)" : parts.joined(separator: ", ")
        }
        lines.append("defaults: \(policy(s["file"]?["defaults"]))")
        for (name, agent) in (s["file"]?["agents"]?.objectValue ?? [:]).sorted(by: { $0.key < $1.key }) {
            lines.append("agent \(name): \(policy(agent))")
            for e in agent["allowlist"]?.arrayValue ?? [] {
                let args = e["argPattern"]?.stringValue.map { " args /\($0)/" } ?? ""
                let used = e["lastUsedCommand"]?.stringValue.map { " (\($0))" } ?? ""
                lines.append("  \(e["id"]?.stringValue ?? "?")  \(e["pattern"]?.stringValue ?? "?")\(args)\(used)")
            }
        }
        return lines.joined(separator: "\n")
    }
}
