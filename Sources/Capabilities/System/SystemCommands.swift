import Config
import FoundationEssentials
import Kit
import Support

/// system.* command names (docs/PROTOCOL.md §6.4).
public enum SystemCommand: String, CaseIterable, Sendable {
    case runPrepare = "system.run.prepare"
    case run = "system.run"
    case which = "system.which"
    case approvalsGet = "system.execApprovals.get"
    case approvalsSet = "system.execApprovals.set"
}

public enum SystemCommands {
    public static let capabilityName = "system"

    static func specs(_ s: SystemCapability) -> [CommandSpec] { [
        CommandSpec(SystemCommand.runPrepare.rawValue, capability: capabilityName, params: SystemRunPrepareParams.self,
                    summary: "check a command against the node's exec policy and return the plan to approve",
                    paramsDoc: [("command", "argv (required)"), ("rawCommand", "string"), ("cwd", "string"), ("env", "object"),
                                ("agentId", "string"), ("sessionKey", "string")],
                    handler: s.prepare),
        CommandSpec(SystemCommand.run.rawValue, capability: capabilityName, params: SystemRunParams.self,
                    summary: "run a command under the exec approvals; stdout/stderr capped at 200000 bytes",
                    paramsDoc: [("command", "argv (required)"), ("rawCommand", "string"), ("cwd", "string"), ("env", "object"),
                                ("timeoutMs", "int, 0 = none"), ("agentId", "string"), ("sessionKey", "string"), ("runId", "string"),
                                ("approved", "bool"), ("approvalDecision", "allow-once|allow-always"), ("systemRunPlan", "object"),
                                ("suppressNotifyOnExit", "bool"), ("needsScreenRecording", "bool")],
                    handler: s.run),
        CommandSpec(SystemCommand.which.rawValue, capability: capabilityName, params: SystemWhichParams.self,
                    summary: "where names are found on PATH", paramsDoc: [("bins", "string[] (required)")],
                    handler: s.which),
        CommandSpec(SystemCommand.approvalsGet.rawValue, capability: capabilityName, params: NoParams.self,
                    summary: "the exec approvals document and its hash", handler: s.approvalsGet),
        CommandSpec(SystemCommand.approvalsSet.rawValue, capability: capabilityName, params: ExecApprovalsSetParams.self,
                    summary: "replace the exec approvals document (baseHash must be the current hash)",
                    paramsDoc: [("file", "object (required)"), ("baseHash", "string")],
                    handler: s.approvalsSet),
    ] }

    /// The keys of `capabilities.system` besides `enabled`.
    public static let configFields: [ConfigField] = SystemSettings.configFields

    public static func capability(context: CapabilityContext) -> any Capability {
        var settings = SystemSettings(context.config.capability(capabilityName))
        settings.sandbox.hiddenDirectories = [PathName.resolvingSymlinks(context.config.stateDir)]
        settings.sandbox.hiddenFiles = [context.config.sourceFile].compactMap { $0 }.map { PathName.resolvingSymlinks($0) }
        return SystemCapability(settings: settings,
                         approvals: ApprovalsStore(documents: context.documents,
                                                   path: context.config.stateDir + "/state.db#exec-approvals"),
                         environment: ProcessInfo.processInfo.environment)
    }
}
