import Kit
import Support

/// exec security: what may run at all.
enum ExecSecurity: String, CaseIterable, Sendable, Comparable {
    case deny, allowlist, full
    private var rank: Int { [.deny: 0, .allowlist: 1, .full: 2][self]! }
    static func < (a: ExecSecurity, b: ExecSecurity) -> Bool { a.rank < b.rank }
}

/// exec ask: when an operator must approve. Stricter is greater.
enum ExecAsk: String, CaseIterable, Sendable, Comparable {
    case off, onMiss = "on-miss", always
    private var rank: Int { [.off: 0, .onMiss: 1, .always: 2][self]! }
    static func < (a: ExecAsk, b: ExecAsk) -> Bool { a.rank < b.rank }
}

/// One allowlist entry of the approvals document.
struct AllowlistEntry: Sendable, Equatable {
    let id: String
    let pattern: String
    let argPattern: String?
    let source: String?
    /// `pattern` made canonical (AllowlistPatterns.canonical), once, when the entry is put in force.
    var canonicalPattern: String? = nil
}

/// The exec-approvals document (upstream's format, docs/PROTOCOL.md §6.4): defaults and per-agent
/// security/ask/askFallback/autoAllowSkills, per-agent allowlists, and a socket block kept for
/// other hosts. Kept as JSON, checked and normalized on every write.
struct ExecApprovalsDocument: Sendable, Equatable {
    var json: JSONValue

    static let empty = ExecApprovalsDocument(json: ["version": 1, "defaults": .object([:]), "agents": .object([:])])
    /// Built-in defaults when neither agent, "*" nor defaults say (the upstream node host's current ones).
    static let systemDefaults: (security: ExecSecurity, ask: ExecAsk, askFallback: ExecSecurity) = (.full, .off, .full)

    /// The document a write would store: known keys only, enums checked, entries given ids.
    /// `pattern` gives each entry's stored pattern, or throws why the entry may not be stored.
    static func normalized(_ v: JSONValue, newId: () -> String,
                           pattern: (String, String?) throws(NodeError) -> String = { p, _ in p }) throws(NodeError) -> ExecApprovalsDocument {
        guard let o = v.objectValue else { throw NodeError.invalidRequest("file must be an object") }
        if let ver = o["version"], ver != 1 { throw NodeError.invalidRequest("file.version must be 1") }
        var out: [String: JSONValue] = ["version": 1]
        if let socket = o["socket"] {
            guard let so = socket.objectValue else { throw NodeError.invalidRequest("file.socket must be an object") }
            out["socket"] = .object(so.filter { ["path", "token"].contains($0.key) && $0.value.stringValue != nil })
        }
        out["defaults"] = .object(try scalars(o["defaults"] ?? .object([:]), "file.defaults"))
        var agents: [String: JSONValue] = [:]
        guard let ao = (o["agents"] ?? .object([:])).objectValue else { throw NodeError.invalidRequest("file.agents must be an object") }
        for (name, agent) in ao {
            guard !name.isEmpty else { throw NodeError.invalidRequest("file.agents: empty agent id") }
            var a = try scalars(agent, "file.agents.\(name)")
            if let list = agent["allowlist"] {
                guard let items = list.arrayValue else { throw NodeError.invalidRequest("file.agents.\(name).allowlist must be an array") }
                a["allowlist"] = .array(try items.enumerated().map { (i, e) throws(NodeError) in
                    try entry(e, "file.agents.\(name).allowlist[\(i)]", newId: newId, pattern: pattern)
                })
            }
            agents[name] = .object(a)
        }
        out["agents"] = .object(agents)
        return ExecApprovalsDocument(json: .object(out))
    }

    private static func scalars(_ v: JSONValue, _ at: String) throws(NodeError) -> [String: JSONValue] {
        guard let o = v.objectValue else { throw NodeError.invalidRequest("\(at) must be an object") }
        var out: [String: JSONValue] = [:]
        for (key, allowed) in [("security", ExecSecurity.allCases.map(\.rawValue)), ("ask", ExecAsk.allCases.map(\.rawValue)),
                               ("askFallback", ExecSecurity.allCases.map(\.rawValue))] {
            guard let value = o[key] else { continue }
            guard let s = value.stringValue, allowed.contains(s) else {
                throw NodeError.invalidRequest("\(at).\(key) must be one of \(allowed.joined(separator: ", "))")
            }
            out[key] = .string(s)
        }
        if let skills = o["autoAllowSkills"] {
            guard let b = skills.boolValue else { throw NodeError.invalidRequest("\(at).autoAllowSkills must be a boolean") }
            out["autoAllowSkills"] = .bool(b)
        }
        return out
    }

    private static func entry(_ e: JSONValue, _ at: String, newId: () -> String,
                              pattern check: (String, String?) throws(NodeError) -> String) throws(NodeError) -> JSONValue {
        guard let o = e.objectValue, let written = o["pattern"]?.stringValue, !written.isEmpty else {
            throw NodeError.invalidRequest("\(at).pattern required")
        }
        let pattern: String
        do { pattern = try check(written, o["argPattern"]?.stringValue) } catch { throw NodeError(error.code, verbatim: "\(at): \(error.message)") }
        var out: [String: JSONValue] = ["pattern": .string(pattern), "id": .string(o["id"]?.stringValue ?? newId())]
        if let arg = o["argPattern"] {
            guard let s = arg.stringValue else { throw NodeError.invalidRequest("\(at).argPattern must be a string") }
            do { _ = try Regex(s) } catch { throw NodeError.invalidRequest("\(at).argPattern is not a valid regular expression") }
            out["argPattern"] = .string(s)
        }
        for key in ["source", "lastUsedCommand", "lastResolvedPath"] { if let s = o[key]?.stringValue { out[key] = .string(s) } }
        if let n = o["lastUsedAt"]?.doubleValue { out["lastUsedAt"] = .number(n) }
        return .object(out)
    }

    // MARK: reading

    /// The text stored and hashed, as upstream writes it: `JSON.stringify(file, null, 2) + "\n"`.
    var text: String { json.indentedText(indent: 2) + "\n" }

    static func hash(of text: String?) -> String {
        guard let text else { return "missing:" + SHA256.hex("") }
        return SHA256.hex(text)
    }

    /// What `system.execApprovals.get` shows: the socket token never leaves the node.
    var redacted: JSONValue {
        guard var o = json.objectValue else { return json }
        if let path = o["socket"]?["path"] { o["socket"] = ["path": path] } else { o["socket"] = nil }
        return .object(o)
    }

    /// The policy for one agent: agent, then "*", then defaults, then the system defaults;
    /// allowlists of the agent and "*" together.
    func policy(agent: String) -> (security: ExecSecurity, ask: ExecAsk, askFallback: ExecSecurity, allowlist: [AllowlistEntry]) {
        let layers = [json["agents"]?[agent], json["agents"]?["*"], json["defaults"]].compactMap { $0 }
        func pick(_ key: String) -> String? { layers.lazy.compactMap { $0[key]?.stringValue }.first }
        let security = pick("security").flatMap(ExecSecurity.init(rawValue:)) ?? Self.systemDefaults.security
        let ask = pick("ask").flatMap(ExecAsk.init(rawValue:)) ?? Self.systemDefaults.ask
        let fallback = pick("askFallback").flatMap(ExecSecurity.init(rawValue:)) ?? Self.systemDefaults.askFallback
        let entries = [json["agents"]?[agent], agent == "*" ? nil : json["agents"]?["*"]].compactMap { $0?["allowlist"]?.arrayValue }
            .flatMap { $0 }.compactMap { e -> AllowlistEntry? in
                guard let p = e["pattern"]?.stringValue else { return nil }
                return AllowlistEntry(id: e["id"]?.stringValue ?? "", pattern: p, argPattern: e["argPattern"]?.stringValue,
                                      source: e["source"]?.stringValue)
            }
        return (security, ask, fallback, entries)
    }

    /// With one more entry in `agent`'s allowlist (allow-always decisions).
    func adding(_ entry: JSONValue, to agent: String) -> ExecApprovalsDocument {
        guard var o = json.objectValue else { return self }
        var agents = o["agents"]?.objectValue ?? [:]
        var a = agents[agent]?.objectValue ?? [:]
        a["allowlist"] = .array((a["allowlist"]?.arrayValue ?? []) + [entry])
        agents[agent] = .object(a)
        o["agents"] = .object(agents)
        return ExecApprovalsDocument(json: .object(o))
    }
}
