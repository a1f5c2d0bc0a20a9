import Config
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
    static func handlers(_ s: SystemCapability) -> [CommandHandler] { [
        CommandHandler(SystemCommand.runPrepare.rawValue, params: SystemRunPrepareParams.self, handler: s.prepare),
        CommandHandler(SystemCommand.run.rawValue, params: SystemRunParams.self, handler: s.run),
        CommandHandler(SystemCommand.which.rawValue, params: SystemWhichParams.self, handler: s.which),
        CommandHandler(SystemCommand.approvalsGet.rawValue, params: NoParams.self, handler: s.approvalsGet),
        CommandHandler(SystemCommand.approvalsSet.rawValue, params: ExecApprovalsSetParams.self, handler: s.approvalsSet),
    ] }

    public static func capability(context: CapabilityContext) -> any Capability {
        var settings = SystemSettings(context.section)
        settings.sandbox.hiddenDirectories = context.privateDirectories.map { PathName.resolvingSymlinks($0) }
        settings.sandbox.hiddenFiles = context.privateFiles.map { PathName.resolvingSymlinks($0) }
        return SystemCapability(manifest: context.manifest, settings: settings,
                                approvals: ApprovalsStore(documents: context.documents, path: context.documents.location("exec-approvals")),
                                environment: context.environment, clock: context.clock, skills: context.skills)
    }
}
