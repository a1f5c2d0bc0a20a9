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

/// `system.run` params, named as the gateway's exec tool sends them. Routing hints
/// (turnSource*) and the execution context are accepted and ignored.
public struct SystemRunParams: CommandParams {
    public var command: [String]?
    public var rawCommand: String?
    public var cwd: String?
    public var env: [String: String]?
    /// The program's own timer (0 or absent: none; the invoke deadline still applies).
    public var timeoutMs: Int?
    public var agentId: String?
    public var sessionKey: String?
    public var approved: Bool?
    public var approvalDecision: String?
    public var runId: String?
    public var suppressNotifyOnExit: Bool?
    public var needsScreenRecording: Bool?
    public var systemRunPlan: SystemRunPlan?

    public func validated() throws(NodeError) -> SystemRunParams {
        guard let c = command, !c.isEmpty, !c[0].isEmpty else { throw NodeError.invalidRequest("command required") }
        if let t = timeoutMs, t < 0 { throw NodeError.invalidRequest("timeoutMs must not be negative (got \(t))") }
        try ParamCheck.oneOf(approvalDecision, "approvalDecision", ["allow-once", "allow-always"])
        return self
    }

    var argv: [String] { command ?? [] }
    /// An approval the gateway carries (an operator said yes to this run).
    var approvedByAsk: Bool { approved == true || approvalDecision != nil }
}

/// `system.run.prepare` params. `security`, `ask` and `strictInlineEval` are the gateway's view;
/// the node decides with its own policy when the run comes.
public struct SystemRunPrepareParams: CommandParams {
    public var command: [String]?
    public var rawCommand: String?
    public var cwd: String?
    public var env: [String: String]?
    public var agentId: String?
    public var sessionKey: String?
    public var security: String?
    public var ask: String?
    public var strictInlineEval: Bool?

    public func validated() throws(NodeError) -> SystemRunPrepareParams {
        guard let c = command, !c.isEmpty, !c[0].isEmpty else { throw NodeError.invalidRequest("command required") }
        return self
    }
}

public struct SystemWhichParams: CommandParams {
    public var bins: [String]?

    public func validated() throws(NodeError) -> SystemWhichParams {
        guard let b = bins, !b.isEmpty else { throw NodeError.invalidRequest("bins required") }
        return self
    }
}

public struct ExecApprovalsSetParams: CommandParams {
    public var file: JSONValue?
    public var baseHash: String?

    public func validated() throws(NodeError) -> ExecApprovalsSetParams {
        guard case .object = file else { throw NodeError.invalidRequest("file required (the exec approvals document, an object)") }
        return self
    }
}
