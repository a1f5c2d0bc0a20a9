import Config
import Kit
import Support

/// `openclaw-node approvals …`, the subcommand this bundle's manifest declares: read and edit the
/// exec approvals document on this machine. Every edit goes through the bundle's own
/// system.execApprovals.get/set on the node's dispatcher (validation, the hash check), so a change
/// made here and one made by the gateway at the same moment cannot overwrite each other: the loser
/// is told to retry. Works whether or not the daemon runs, and whether or not system is enabled yet.
/// Its --help text is in the manifest, printed without loading the bundle.
enum ApprovalsCLI {
    static func main(_ args: [String], _ out: BundleCLIContext) async -> Int32 {
        do {
            let a = try Arguments(args, valued: ["config", "args", "agent", "security", "ask", "ask-fallback"], known: ["json"])
            guard !a.positionals.isEmpty else { throw Arguments.Failure(description: "expected show, allow PATTERN, remove ID or policy") }
            return try await run(a, Document(invoke: out.invoke), out)
        } catch let e as Arguments.Failure {
            out.printError("openclaw-node approvals: \(e.description). See openclaw-node approvals --help")
            return 64
        } catch {
            out.printError("openclaw-node approvals: \(error)")
            return 1
        }
    }

    private static func run(_ a: Arguments, _ doc: Document, _ out: BundleCLIContext) async throws -> Int32 {
        switch (a.positionals[0], a.positionals.count) {
        case ("show", 1):
            let snapshot = try await doc.get()
            out.printLine(a.flag("json") ? snapshot.jsonString(pretty: true) : describe(snapshot))
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
            out.printLine("allowed \(a.positionals[1])\(a.option("args").map { " with arguments matching /\($0)/" } ?? "") for agent \(agent)")
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
            guard found else { out.printError("openclaw-node approvals: no allowlist entry has id \(id) (see openclaw-node approvals show)"); return 1 }
            out.printLine("removed \(id)")
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
            out.printLine("\(agent.map { "agent \($0)" } ?? "defaults"): " + changes.map { "\($0.0) \($0.1)" }.joined(separator: ", "))
        case ("pending", 1), ("approve", 2):
            return await devicePlans(a, out)
        default:
            throw Arguments.Failure(description: "expected show, allow PATTERN, remove ID, policy, pending or approve PLAN")
        }
        return 0
    }

    /// The plans the running daemon issued (system.run.prepare), and approving one at the device:
    /// they live in the daemon's memory, so these need it running.
    private static func devicePlans(_ a: Arguments, _ out: BundleCLIContext) async -> Int32 {
        guard let daemon = out.daemon else {
            out.printError("openclaw-node approvals: no daemon runs with this config's state directory; the plans to approve are held by the running daemon")
            return 1
        }
        let approving = a.positionals[0] == "approve"
        let request: JSONValue = approving ? ["op": "approve", "plan": .string(a.positionals[1])] : ["op": "plans"]
        switch await daemon.query(request) {
        case .failure(let e):
            out.printError("openclaw-node approvals: \(e.message)")
            return 1
        case .success(let v) where approving:
            if a.flag("json") { out.printLine(v.jsonString(pretty: true)) }
            else { out.printLine("approved plan \(v["id"]?.stringValue ?? "?") at the device: \(v["command"]?.stringValue ?? "?") (agent \(v["agent"]?.stringValue ?? "?")); it runs once, when the gateway sends it again") }
        case .success(let v):
            let plans = v.arrayValue ?? []
            if a.flag("json") { out.printLine(v.jsonString(pretty: true)); return 0 }
            if plans.isEmpty { out.printLine("no plans waiting (system.run.prepare issues them; each is valid for an hour)") }
            for p in plans {
                let state = p["approvedAtDevice"] == true ? "approved here" : "waiting"
                out.printLine("\(p["id"]?.stringValue ?? "?")  \(state)  \(p["ageSeconds"]?.intValue ?? 0) s ago  agent \(p["agent"]?.stringValue ?? "?")  \(p["command"]?.stringValue ?? "?")")
            }
        }
        return 0
    }

    /// The document through the dispatcher, as the gateway sees it.
    struct Document {
        let invoke: @Sendable (String, JSONValue) async -> Result<JSONValue, NodeError>

        func call(_ command: String, _ params: JSONValue) async throws -> JSONValue {
            switch await invoke(command, params) {
            case .success(let v): return v
            case .failure(let e): throw Failed(description: e.message)
            }
        }

        func get() async throws -> JSONValue { try await call(SystemCommand.approvalsGet.rawValue, [:]) }

        /// Read, change, write with the hash read; the bundle refuses the write if anything changed in between.
        func edit(_ change: (inout [String: JSONValue]) -> Void) async throws {
            let snapshot = try await get()
            var file = snapshot["file"]?.objectValue ?? [:]
            let before = file
            change(&file)
            if file == before { return }
            _ = try await call(SystemCommand.approvalsSet.rawValue, ["file": .object(file), "baseHash": snapshot["hash"] ?? .null])
        }
    }

    struct Failed: Error, CustomStringConvertible { let description: String }

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
