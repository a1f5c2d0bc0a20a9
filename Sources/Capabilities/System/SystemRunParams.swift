import Kit
import Support

/// The plan `system.run.prepare` returns and the gateway sends back with `system.run` once an
/// operator approved it (docs/PROTOCOL.md §6.4).
public struct SystemRunPlan: Codable, Sendable, Equatable {
    public var argv: [String]
    public var cwd: String?
    public var commandText: String?
    public var agentId: String?
    public var sessionKey: String?
}

/// `system.run` params, named as the gateway's exec tool sends them and described by the manifest
/// row. Routing hints (turnSource*) and the execution context are accepted and ignored.
public struct SystemRunParams: CommandParams {
    public var command: [String]
    public var rawCommand: String?
    public var cwd: String?
    public var env: [String: String]?
    /// The program's own timer (0 or absent: none; the invoke deadline still applies).
    public var timeoutMs: Int?
    /// Absent is not "main": a plan prepared for no agent matches only a run for no agent.
    public var agentId: String?
    public var sessionKey: String
    public var approved: Bool?
    public var approvalDecision: String?
    public var runId: String?
    public var suppressNotifyOnExit: Bool?
    public var needsScreenRecording: Bool?
    public var systemRunPlan: SystemRunPlan?

    /// The wire fields (the resolved one below is not decoded).
    enum CodingKeys: String, CodingKey {
        case command, rawCommand, cwd, env, timeoutMs, agentId, sessionKey, approved, approvalDecision, runId,
             suppressNotifyOnExit, needsScreenRecording, systemRunPlan
    }

    /// The run's id, made once by `validated()`: the caller's `runId`, else a fresh one (the log
    /// lines and exec events of one run carry the same id).
    public private(set) var resolvedRunId = ""

    public func validated() throws(NodeError) -> SystemRunParams {
        guard !command.isEmpty, !command[0].isEmpty else { throw NodeError.invalidRequest("command required") }
        var p = self
        p.resolvedRunId = runId ?? SecureRandom.uuid()
        return p
    }

    var argv: [String] { command }
    /// The agent a remembered approval (allow-always) is filed under.
    var approvalAgent: String { agentId ?? "main" }
    /// The program's own timer; nil when absent or 0.
    var programTimeout: Duration? { timeoutMs.flatMap { $0 > 0 ? .milliseconds($0) : nil } }
    /// An approval the gateway carries (an operator said yes to this run).
    var approvedByAsk: Bool { approved == true || approvalDecision != nil }
}

/// `system.run`'s result. `error` is always there (null when none); `exitCode` only when the
/// program exited.
public struct SystemRunResult: Encodable, Sendable, Equatable {
    public let timedOut: Bool
    public let success: Bool
    public let stdout: String
    public let stderr: String
    public let error: String?
    public let truncated: Bool
    public let exitCode: Int32?

    enum CodingKeys: String, CodingKey { case timedOut, success, stdout, stderr, error, truncated, exitCode }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(timedOut, forKey: .timedOut)
        try c.encode(success, forKey: .success)
        try c.encode(stdout, forKey: .stdout)
        try c.encode(stderr, forKey: .stderr)
        try c.encode(error, forKey: .error)  // null, not absent
        try c.encode(truncated, forKey: .truncated)
        try c.encodeIfPresent(exitCode, forKey: .exitCode)
    }
}

/// `system.run.prepare` params. `security`, `ask` and `strictInlineEval` are the gateway's view;
/// the node decides with its own policy when the run comes.
public struct SystemRunPrepareParams: CommandParams {
    public var command: [String]
    public var rawCommand: String?
    public var cwd: String?
    public var env: [String: String]?
    public var agentId: String?
    public var sessionKey: String?
    public var security: String?
    public var ask: String?
    public var strictInlineEval: Bool?
    /// The installed application (device.apps) this plan is for: the plan is then bound to that
    /// app's revision, and `command` must be exactly its program.
    public var installedApp: InstalledAppRef?

    public func validated() throws(NodeError) -> SystemRunPrepareParams {
        guard !command.isEmpty, !command[0].isEmpty else { throw NodeError.invalidRequest("command required") }
        if let app = installedApp, app.appId.isEmpty || app.appRevision.isEmpty {
            throw NodeError.invalidRequest("installedApp needs appId and appRevision (from device.apps)")
        }
        return self
    }

    var argv: [String] { command }
}

/// An installed application and the revision an operator is asked to approve.
public struct InstalledAppRef: Codable, Sendable, Equatable {
    public let appId: String
    public let appRevision: String
}

/// `system.run.prepare`'s result: the plan (its unknown fields null, not absent) and the node's policy.
public struct SystemRunPrepareResult: Encodable, Sendable, Equatable {
    public struct Plan: Encodable, Sendable, Equatable {
        public let argv: [String]
        public let cwd: String?
        public let commandText: String
        public let agentId: String?
        public let sessionKey: String?
        /// Only for an installed app's plan (upstream adds the field then, and only then).
        public var installedApp: InstalledAppRef? = nil

        enum CodingKeys: String, CodingKey { case argv, cwd, commandText, commandPreview, agentId, sessionKey, installedApp }

        public func encode(to encoder: Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(argv, forKey: .argv)
            try c.encode(cwd, forKey: .cwd)
            try c.encode(commandText, forKey: .commandText)
            try c.encodeNil(forKey: .commandPreview)
            try c.encode(agentId, forKey: .agentId)
            try c.encode(sessionKey, forKey: .sessionKey)
            try c.encodeIfPresent(installedApp, forKey: .installedApp)
        }
    }
    public struct ExecPolicy: Encodable, Sendable, Equatable {
        public let security: String
        public let ask: String
    }
    public let plan: Plan
    public let execPolicy: ExecPolicy
}

public struct SystemWhichParams: CommandParams {
    public var bins: [String]

    public func validated() throws(NodeError) -> SystemWhichParams {
        guard !bins.isEmpty else { throw NodeError.invalidRequest("bins required") }
        return self
    }

    /// The names to look up: plain program names only (no path, no backslash).
    var names: [String] { bins.filter { !$0.isEmpty && !$0.contains("/") && !$0.contains("\\") } }
}

/// `system.which`'s result: each name found on PATH and its full path.
public struct SystemWhichResult: Encodable, Sendable, Equatable {
    public let bins: [String: String]
}

/// `system.execApprovals.get`'s (and `.set`'s) result: the stored document, redacted, and its hash.
public struct ExecApprovalsSnapshotResult: Encodable, Sendable, Equatable {
    public let path: String
    public let exists: Bool
    public let hash: String
    /// The document as stored (free-form beyond what the node reads), its secrets redacted.
    public let file: JSONValue
}

public struct ExecApprovalsSetParams: CommandParams {
    public var file: [String: JSONValue]
    public var baseHash: String?

    /// The document, as the store takes it.
    var document: JSONValue { .object(file) }
}
