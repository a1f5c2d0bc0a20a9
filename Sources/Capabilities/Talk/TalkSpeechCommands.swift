import Kit
import Media
import Support

/// stt.* and tts.*: the recognizer and the voice talk already has, as commands that answer with
/// the words or the speech instead of handing them to an agent.
extension TalkCapability {
    func sttTranscribe(_ p: SttTranscribeParams, _ ctx: InvocationContext) async throws(NodeError) -> SttTranscribeResult {
        try SpeechEngines.checkLanguage(p.language)
        try refuseDuringConversation()
        let ptt = try session()
        if let base64 = p.audioBase64 {
            let audio = try SpeechEngines.recognizerInput(base64: base64, format: p.format)
            wake.pause()
            defer { wake.resume() }
            let text = try await BlockingExecutor.run("stt-transcribe") { (flag: CancelFlag) throws(NodeError) -> String in
                try ptt.transcribe(audio.samples, cancel: flag)
            }
            return SttTranscribeResult(transcribed: !text.isEmpty, text: text, durationMs: Int(audio.seconds * 1000),
                                       language: SpeechEngines.language, engineEffective: SpeechEngines.stt)
        }
        // The Windows node's form: record exactly maxDurationMs from the microphone, then recognise.
        let duration = Duration.milliseconds(p.maxDurationMs ?? 0)
        let done = try await listenOnce(ptt, cap: duration, endOnSilence: false)
        let text = done?.transcript ?? ""
        return SttTranscribeResult(transcribed: !text.isEmpty, text: text, durationMs: Int(duration.milliseconds),
                                   language: SpeechEngines.language, engineEffective: SpeechEngines.stt)
    }

    /// Until speech then silence, or timeoutMs.
    func sttListen(_ p: SttListenParams, _ ctx: InvocationContext) async throws(NodeError) -> SttListenResult {
        try SpeechEngines.checkLanguage(p.language)
        try refuseDuringConversation()
        let ptt = try session()
        let started = ContinuousClock.now
        let done = try await listenOnce(ptt, cap: .milliseconds(p.timeoutMs))
        return SttListenResult(text: done?.transcript ?? "", language: SpeechEngines.language,
                               durationMs: Int((ContinuousClock.now - started).milliseconds), engineEffective: SpeechEngines.stt)
    }

    func sttStatus(_ p: NoParams, _ ctx: InvocationContext) async throws(NodeError) -> SttStatusResult {
        let readiness = PocketSphinxRecognizer.missingModelFile(settings.modelDir) == nil ? "ready" : "model-not-downloaded"
        return SttStatusResult(engine: SpeechEngines.stt, readiness: readiness, language: SpeechEngines.language,
                               isListenWithVadSupported: true, isBoundedTranscribeSupported: true)
    }

    /// Spoken on the speaker (and waited for), or returned as a WAV file.
    func ttsSpeak(_ p: TtsSpeakParams, _ ctx: InvocationContext) async throws(NodeError) -> TtsSpeakResult {
        let voiceName = p.voiceId ?? settings.voice
        let (text, rate) = (p.text, p.rate)
        let audio = try await TalkWork.blocking { () throws(NodeError) in try EspeakVoice.synthesize(text, voice: voiceName, rate: rate) }
        var result = TtsSpeakResult(spoken: false, provider: SpeechEngines.ttsProvider, requestedProvider: p.provider ?? SpeechEngines.ttsProvider,
                                    fellBack: false, contentType: "audio/wav", durationMs: Int(audio.seconds * 1000))
        switch p.output {
        case .audio:
            result.audioBase64 = Base64.encode(WAVEncoder.encode(audio))
            result.format = "wav"
        case .speaker:
            result.spoken = try await voice.play(audio, interrupting: p.interrupt)
        }
        return result
    }

    func ttsStatus(_ p: NoParams, _ ctx: InvocationContext) async throws(NodeError) -> TtsStatusResult {
        // Ready when espeak-ng starts and has the voice (a one-word synthesis says both).
        let voiceName = settings.voice
        let ready = (try? await TalkWork.blocking { () throws(NodeError) in try EspeakVoice.synthesize(" ", voice: voiceName) }) != nil
        return TtsStatusResult(configuredProvider: SpeechEngines.ttsProvider, effectiveProvider: SpeechEngines.ttsProvider, willFallBack: false,
                               providers: [.init(provider: SpeechEngines.ttsProvider, readiness: ready ? "ready" : "unavailable", isReady: ready)])
    }
}
