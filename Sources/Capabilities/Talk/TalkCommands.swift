import Config
import Kit
import Support

public enum TalkCommands {
    /// One permission per row: the manifest's `microphone` and `speechRecognition` are both true
    /// exactly when talk is advertised (the capture device opened and the model loaded).
    static func handlers(_ t: TalkCapability) -> [CommandHandler] { [
        CommandHandler("talk.ptt.start", params: NoParams.self, handler: t.start),
        CommandHandler("talk.ptt.stop", params: NoParams.self, handler: t.stop),
        CommandHandler("talk.ptt.cancel", params: NoParams.self, handler: t.cancel),
        CommandHandler("talk.ptt.once", params: NoParams.self, handler: t.once),
        CommandHandler("chat.push", params: ChatPushParams.self, handler: t.push),
        CommandHandler("talk.start", params: NoParams.self, handler: t.talkStart),
        CommandHandler("talk.stop", params: NoParams.self, handler: t.talkStop),
        CommandHandler("stt.transcribe", params: SttTranscribeParams.self, handler: t.sttTranscribe),
        CommandHandler("stt.listen", params: SttListenParams.self, handler: t.sttListen),
        CommandHandler("stt.status", params: NoParams.self, handler: t.sttStatus),
        CommandHandler("tts.speak", params: TtsSpeakParams.self, handler: t.ttsSpeak),
        CommandHandler("tts.status", params: NoParams.self, handler: t.ttsStatus),
    ] }

    public static func capability(context: CapabilityContext) -> any Capability {
        var settings = TalkSettings(context.section)
        settings.libraryDirectory = context.manifest.library.flatMap(BundleCatalog.directory(holding:))
        return TalkCapability(manifest: context.manifest, settings: settings, stateDirectory: context.stateDirectory, keepAwake: context.keepAwake)
    }
}

/// chat.push params, as the manifest row describes them.
public struct ChatPushParams: CommandParams {
    public var text: String
    public var speak: Bool

    /// Blank text is as good as none.
    public func validated() throws(NodeError) -> ChatPushParams {
        guard !text.trimmed().isEmpty else { throw NodeError.invalidRequest("text required") }
        return self
    }
}

/// talk.start's result, as the ESP room node answers: `{started}`, `alreadyActive` when refused for that.
public struct TalkStartResult: Encodable, Sendable, Equatable {
    public let started: Bool
    public var alreadyActive: Bool?
    public init(started: Bool, alreadyActive: Bool? = nil) { self.started = started; self.alreadyActive = alreadyActive }
}

/// talk.stop's result: whether a conversation was ended.
public struct TalkStopResult: Encodable, Sendable, Equatable {
    public let stopped: Bool
}

/// chat.push's result.
public struct ChatPushResult: Encodable, Sendable, Equatable {
    public let messageId: String
}

/// The result of talk.ptt.start, .stop, .cancel and .once: the capture, and (but for start) what
/// became of it — `idle`, `cancelled`, `busy`, `empty`, or `queued`/`offline` with its transcript.
public struct TalkPttResult: Encodable, Sendable, Equatable {
    public let captureId: String
    public var status: String?
    public var transcript: String?

    public init(captureId: String, status: String? = nil, transcript: String? = nil) {
        self.captureId = captureId; self.status = status; self.transcript = transcript
    }

    /// No capture was active: a fresh id, status `idle`.
    static func idle() -> TalkPttResult { TalkPttResult(captureId: SecureRandom.uuid(), status: "idle") }
}
