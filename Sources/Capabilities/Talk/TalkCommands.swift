import Config
import Kit
import Support

public enum TalkCommands {
    public static let capabilityName = "talk"

    /// One permission per row: the manifest's `microphone` and `speechRecognition` are both true
    /// exactly when talk is advertised (the capture device opened and the model loaded).
    static func specs(_ t: TalkCapability) -> [CommandSpec] { [
        CommandSpec("talk.ptt.start", capability: capabilityName, params: NoParams.self, requiresForeground: true,
                    permission: "microphone", summary: "start a push-to-talk capture: {captureId}", handler: t.start),
        CommandSpec("talk.ptt.stop", capability: capabilityName, params: NoParams.self, requiresForeground: true,
                    permission: "microphone", summary: "stop it; the transcript goes to the agent: {captureId, transcript, status}",
                    handler: t.stop),
        CommandSpec("talk.ptt.cancel", capability: capabilityName, params: NoParams.self, requiresForeground: true,
                    permission: "microphone", summary: "drop the capture: {captureId, status}", handler: t.cancel),
        CommandSpec("talk.ptt.once", capability: capabilityName, params: NoParams.self, requiresForeground: true,
                    permission: "speechRecognition", summary: "capture until speech then silence (at most 12 s), like stop",
                    handler: t.once),
        CommandSpec("chat.push", capability: capabilityName, params: ChatPushParams.self,
                    summary: "a message for the person at the device, spoken on it: {messageId}",
                    paramsDoc: [("text", "string (required)"), ("speak", "bool, default true")], handler: t.push),
    ] }

    public static let configFields: [ConfigField] = TalkSettings.configFields

    public static func capability(context: CapabilityContext) -> any Capability {
        TalkCapability(settings: TalkSettings(context.config.capability(capabilityName)), stateDir: context.config.stateDir)
    }
}

/// chat.push params: `{text, speak?}`.
public struct ChatPushParams: CommandParams {
    public var text: String?
    public var speak: Bool?

    public func validated() throws(NodeError) -> ChatPushParams {
        guard let t = text?.trimmed(), !t.isEmpty else { throw NodeError.invalidRequest("text required") }
        return self
    }
}
