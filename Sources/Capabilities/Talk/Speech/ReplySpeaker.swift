import Kit
import Media
import Support

/// Speaks text on the playback device. With an operator session the gateway's voice is used, as
/// the apps do: `talk.speak` returns the audio (PCM at 24 kHz is asked for; WAV, MP3 and Ogg/Opus
/// are played too). espeak-ng on the device speaks instead when there is no operator session, when
/// the gateway says its voice is out of reach (`fallbackEligible`, or no reason given, as Android
/// decides), or when the audio it returned cannot be played here.
final class ReplySpeaker: Sendable {
    /// What the node asks `talk.speak` for: headerless s16le mono, played as is (Android's default).
    static let requestedFormat = "pcm_24000"
    /// Synthesis of a long reply by a cloud voice can take a while.
    static let speakTimeout: Duration = .seconds(30)

    private let settings: TalkSettings
    private let speaker: AudioPlayback
    private let log = Logger(component: "talk")
    /// chat.push replies played after the command answered; shutdown ends them.
    private let playing = OwnedTasks()

    init(settings: TalkSettings, speaker: AudioPlayback) {
        self.settings = settings
        self.speaker = speaker
    }

    /// Stops what is being spoken, and any reply asked for before now that has not started yet
    /// (talk.speak may still be synthesizing when a new push-to-talk begins).
    func interrupt() { speaker.interrupt() }

    /// Stops what is being spoken and waits for the playbacks it started.
    func shutdown() async {
        speaker.interrupt()
        await playing.cancelAll()
    }

    /// Speaks `text`; `why` names it in the log ("the agent's reply").
    func speak(_ text: String, why: String, operatorSession: OperatorSession?) async {
        let asked = speaker.mark
        var voice = "espeak-ng"
        var audio: SpeechAudio?
        if let session = operatorSession, await session.isConnected() {
            switch await gatewayVoice(text, session) {
            case .spoken(let a, let provider): audio = a; voice = provider
            case .fallback(let reason): log.info("speaking \(why) with espeak-ng: \(reason)")
            case .refused(let reason): log.warn("could not speak \(why): the gateway's voice refused (\(reason)) and does not allow a local voice"); return
            }
        }
        let fromGateway = audio
        guard speaker.mark == asked else { log.info("not speaking \(why): a new push-to-talk began meanwhile"); return }
        do throws(NodeError) {
            let played = try await TalkWork.blocking { [settings, speaker] () throws(NodeError) -> Double? in
                let a: SpeechAudio
                if let fromGateway { a = fromGateway } else { a = try EspeakVoice.synthesize(text, voice: settings.voice) }
                do throws(AudioPlayback.Failure) {
                    return try speaker.play(a.samples, sampleRate: a.sampleRate, unlessInterruptedSince: asked) ? a.seconds : nil
                } catch {
                    throw NodeError.unavailable(error.description)
                }
            }
            if let seconds = played { log.info("spoke \(why): \(text.count) characters, \(seconds.fixed(1)) s (\(voice))") }
            else { log.info("stopped speaking \(why): a new push-to-talk began") }
        } catch {
            log.warn("could not speak \(why): \(error.message)")
        }
    }

    /// Plays speech made elsewhere (tts.speak) and returns once it was played: false when a newer
    /// reply or push-to-talk interrupted it. `interrupting`: stop what is playing first.
    func play(_ audio: SpeechAudio, interrupting: Bool) async throws(NodeError) -> Bool {
        if interrupting { speaker.interrupt() }
        let speaker = speaker
        return try await TalkWork.blocking { () throws(NodeError) -> Bool in
            do throws(AudioPlayback.Failure) { return try speaker.play(audio.samples, sampleRate: audio.sampleRate) }
            catch { throw NodeError.unavailable("\(error.description); set capabilities.talk.playbackDevice to a playback device (aplay -L)") }
        }
    }

    /// Speaks `text` with espeak-ng only (chat.push: the node's own voice, as iOS uses its system voice).
    func speakLocally(_ text: String) async throws(NodeError) {
        let (settings, speaker) = (settings, speaker)
        let audio = try await TalkWork.blocking { () throws(NodeError) in try EspeakVoice.synthesize(text, voice: settings.voice) }
        playing.start { [log] in
            do throws(NodeError) { try await TalkWork.blocking { () throws(NodeError) in
                do throws(AudioPlayback.Failure) { try speaker.play(audio.samples, sampleRate: audio.sampleRate) } catch { throw NodeError.unavailable(error.description) }
            } } catch { log.warn("chat.push not spoken: \(error.message)") }
        }
    }

    private enum GatewayVoice {
        case spoken(SpeechAudio, provider: String)
        case fallback(String)
        case refused(String)
    }

    private func gatewayVoice(_ text: String, _ session: OperatorSession) async -> GatewayVoice {
        let started = ContinuousClock.now
        let reply = await session.talkSpeak(TalkSpeakRequest(text: text, outputFormat: Self.requestedFormat), timeout: Self.speakTimeout)
        switch reply {
        case .failure(let e):
            let reason = e.details?["reason"]?.stringValue
            // Android's rule: the local voice when the gateway allows it or gives no reason.
            if e.details?["fallbackEligible"]?.boolValue == true || reason == nil { return .fallback("talk.speak: \(e)") }
            return .refused(reason ?? e.code)
        case .success(let p):
            guard let b64 = p.audioBase64, let data = Base64.decode(b64), !data.isEmpty else {
                return .fallback("talk.speak returned no audio")
            }
            let bytes = [UInt8](data)
            let format = SpeechFormat.detect(bytes, outputFormat: p.outputFormat, mimeType: p.mimeType, fileExtension: p.fileExtension)
            do {
                let audio = try SpeechFormat.decode(bytes, as: format)
                let provider = p.provider ?? "gateway"
                log.debug("talk.speak: \(bytes.count) bytes of \(format) from \(provider) in \((ContinuousClock.now - started).milliseconds) ms")
                return .spoken(audio, provider: "gateway voice \(provider), \(format.name)")
            } catch {
                return .fallback(error.description)
            }
        }
    }
}
