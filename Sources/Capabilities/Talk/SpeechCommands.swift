import Kit
import Media
import Support

// stt.* and tts.*: the node's offline speech engines as commands of their own (the Windows node's
// speech commands, in its shapes where it has them), for agents and for `mcp serve`.

/// stt.transcribe's params: audio given, or (the Windows node's form) recorded for maxDurationMs.
public struct SttTranscribeParams: CommandParams, Equatable {
    public var audioBase64: String?
    public var format: String?
    public var maxDurationMs: Int?
    public var language: String?

    /// One source of audio: given, or recorded (a rule the manifest cannot state).
    public func validated() throws(NodeError) -> SttTranscribeParams {
        switch (audioBase64, maxDurationMs) {
        case (nil, nil): throw NodeError.invalidRequest("audioBase64 or maxDurationMs required (the audio, or how long to record)")
        case (.some, .some): throw NodeError.invalidRequest("audioBase64 and maxDurationMs do not go together: give the audio, or record")
        default: return self
        }
    }
}

/// stt.listen's params.
public struct SttListenParams: CommandParams, Equatable {
    public var timeoutMs: Int
    public var language: String?
}

/// What stt.transcribe answers (the Windows node's fields).
public struct SttTranscribeResult: Encodable, Sendable, Equatable {
    public let transcribed: Bool
    public let text: String
    /// The audio's length.
    public let durationMs: Int
    public let language: String
    public let engineEffective: String
}

/// What stt.listen answers.
public struct SttListenResult: Encodable, Sendable, Equatable {
    public let text: String
    public let language: String
    /// How long it listened.
    public let durationMs: Int
    public let engineEffective: String
}

public struct SttStatusResult: Encodable, Sendable, Equatable {
    public let engine: String
    /// ready, model-not-downloaded (the model's files are missing) or unavailable.
    public let readiness: String
    public let language: String
    public let isListenWithVadSupported: Bool
    public let isBoundedTranscribeSupported: Bool
}

/// tts.speak's params.
public struct TtsSpeakParams: CommandParams, Equatable {
    /// The Windows node's limit.
    static let maxTextLength = 5000
    public var text: String
    public var provider: String?
    public var voiceId: String?
    public var rate: Int?
    public var interrupt: Bool
    public var output: TtsOutput

    /// Blank text is as good as none; one provider here.
    public func validated() throws(NodeError) -> TtsSpeakParams {
        guard !text.trimmed().isEmpty else { throw NodeError.invalidRequest("text required") }
        guard text.count <= Self.maxTextLength else {
            throw NodeError.invalidRequest("text is \(text.count) characters; tts.speak takes at most \(Self.maxTextLength)")
        }
        if let provider, provider != SpeechEngines.ttsProvider {
            throw NodeError.invalidRequest("provider must be \(SpeechEngines.ttsProvider) (got \"\(provider)\"): this node speaks with espeak-ng only")
        }
        return self
    }
}

public enum TtsOutput: String, Codable, Sendable, Equatable, CaseIterable {
    /// Played on the device's speaker.
    case speaker
    /// Returned as a WAV file (audioBase64).
    case audio
}

/// What tts.speak answers (the Windows node's fields; `audioBase64` and `format` with output audio).
public struct TtsSpeakResult: Encodable, Sendable, Equatable {
    public var spoken: Bool
    public let provider: String
    public let requestedProvider: String
    public let fellBack: Bool
    public let contentType: String
    /// The speech's length.
    public let durationMs: Int
    public var audioBase64: String?
    public var format: String?
}

public struct TtsStatusResult: Encodable, Sendable, Equatable {
    public struct Provider: Encodable, Sendable, Equatable {
        public let provider: String
        public let readiness: String
        public let isReady: Bool
    }
    public let configuredProvider: String
    public let effectiveProvider: String
    public let willFallBack: Bool
    public let providers: [Provider]
}

/// The engines' names and the one language the recognizer's model speaks.
enum SpeechEngines {
    static let stt = "pocketsphinx"
    static let ttsProvider = "espeak"
    static let language = "en-US"
    /// The longest audio stt.transcribe takes: five minutes.
    static let maxTranscribeSeconds = 300

    /// nil, "auto" or an English tag; anything else is refused with what is installed.
    static func checkLanguage(_ tag: String?) throws(NodeError) {
        guard let tag, !tag.isEmpty else { return }
        let t = tag.lowercased()
        if t == "auto" || t == "en" || t.hasPrefix("en-") { return }
        throw NodeError.invalidRequest("language \(tag) is not installed: the speech model here is \(language) (pocketsphinx-en-us)")
    }

    /// Decodes given audio to what the recognizer takes: 16 kHz mono.
    static func recognizerInput(base64: String, format: String?) throws(NodeError) -> SpeechAudio {
        guard let bytes = Base64.decode(base64), !bytes.isEmpty else { throw NodeError.invalidRequest("audioBase64 is not base64 audio") }
        let hint = format?.lowercased()
        let kind = SpeechFormat.detect(bytes, outputFormat: hint == "ogg" || hint == "opus" ? nil : hint, mimeType: nil, fileExtension: hint)
        var audio: SpeechAudio
        do throws(SpeechAudioError) { audio = try SpeechFormat.decode(bytes, as: kind) }
        catch { throw NodeError.invalidRequest("audioBase64: \(error.description)") }
        guard audio.sampleRate > 0, !audio.samples.isEmpty else { throw NodeError.invalidRequest("audioBase64 holds no samples") }
        guard audio.seconds <= Double(maxTranscribeSeconds) else {
            throw NodeError.invalidRequest("the audio is \(Int(audio.seconds)) s long; stt.transcribe takes at most \(maxTranscribeSeconds) s")
        }
        if audio.sampleRate != 16_000 {
            var resampler = AudioResampler(from: audio.sampleRate, to: 16_000)
            audio = SpeechAudio(samples: resampler.process(audio.samples) + resampler.flush(), sampleRate: 16_000)
        }
        return audio
    }
}
