import Config
import FoundationEssentials
import Glibc
import Kit
import Media
import Support

/// Push-to-talk (docs/PROTOCOL.md §6.6): talk.ptt.start/stop/cancel/once record from the
/// microphone, recognise speech on the device (pocketsphinx), and hand the transcript to the agent
/// with `voice.transcript` on the node connection. Results are shaped as the iOS and Android nodes
/// return them.
final class TalkCapability: Capability, @unchecked Sendable {
    let name = TalkCommands.capabilityName
    let settings: TalkSettings
    private let log = Logger(component: "talk")
    private let lock = Lock()
    private var ptt: PushToTalk?
    private var link: GatewayLink?
    private let replies = ReplyTracker()
    private let speaker: AudioPlayback

    init(settings: TalkSettings) {
        self.settings = settings
        speaker = AudioPlayback(device: settings.playbackDevice)
    }

    /// The agent's replies arrive as `chat` events on the session the transcript went to.
    var gatewayEvents: Set<String> { ["chat"] }

    func gatewayEvent(_ name: String, _ payload: JSONValue) async {
        guard name == "chat", let text = replies.handle(payload) else { return }
        await speak(text, why: "the agent's reply")
    }

    var commands: [CommandSpec] { TalkCommands.specs(self) }

    /// Talk is advertised only when push-to-talk can work: the model is installed and the capture
    /// device opens (a device busy right now still exists).
    func availability() async -> Availability {
        if let missing = PocketSphinxRecognizer.missingModelFile(settings.modelDir) {
            return .unavailable("speech recognizer model not found (\(missing)); install it: sudo apt install pocketsphinx-en-us")
        }
        do { _ = try MicrophoneCapture(device: settings.captureDevice, sampleRate: 16_000, channels: 1).stop() } catch {
            if error.kind != .busy {
                return .unavailable("\(error.description); set capabilities.talk.captureDevice to a capture device (arecord -L)")
            }
        }
        return .available
    }

    /// The daemon loads the recognizer once (about a second) so the first push-to-talk is quick.
    func start() async -> Availability {
        do { _ = try session() } catch { return .unavailable(error.message) }
        return .available
    }

    /// doctor: the model, the capture device and the playback device, each with what to do.
    func diagnose() async -> [Diagnosis] {
        var out: [Diagnosis] = []
        if let missing = PocketSphinxRecognizer.missingModelFile(settings.modelDir) {
            out.append(Diagnosis(.fail, "speech model missing (\(missing)): sudo apt install pocketsphinx-en-us"))
        } else {
            out.append(Diagnosis(.ok, "speech model \(settings.modelDir) (pocketsphinx, English)"))
        }
        do {
            let mic = try MicrophoneCapture(device: settings.captureDevice, sampleRate: 16_000, channels: 1)
            out.append(Diagnosis(.ok, "capture device \"\(settings.captureDevice)\" opens (\(mic.sampleRate) Hz)"))
            _ = mic.stop()
        } catch {
            out.append(Diagnosis(.warn,
                                 "\(error.description); capabilities.talk.captureDevice must name a capture device (arecord -L)"))
        }
        do {
            try AudioPlayback(device: settings.playbackDevice).play([], sampleRate: 22_050)
            out.append(Diagnosis(.ok, "playback device \"\(settings.playbackDevice)\" opens"))
        } catch {
            out.append(Diagnosis(.warn, "\(error.description): replies cannot be spoken"))
        }
        do { _ = try EspeakVoice.synthesize("ok", voice: settings.voice); out.append(Diagnosis(.ok, "espeak-ng voice \"\(settings.voice)\"")) }
        catch { out.append(Diagnosis(.warn, "\(error.message): replies cannot be spoken")) }
        return out
    }

    func gatewayConnected(_ link: GatewayLink) async {
        lock.withLock { self.link = link }
        // The gateway forgets a node's subscriptions when it disconnects: renew a pending one.
        if replies.isArmed, let key = replies.sessionKey { _ = await link.sendEvent("chat.subscribe", ["sessionKey": .string(key)]) }
    }
    func gatewayDisconnected() async {}
    func shutdown() async { _ = lock.withLock { ptt }?.cancel() }

    private func session() throws(NodeError) -> PushToTalk {
        try lock.withLock { () throws(NodeError) -> PushToTalk in
            if let ptt { return ptt }
            let started = ContinuousClock.now
            let recognizer = try PocketSphinxRecognizer(modelDir: settings.modelDir)
            log.info("speech recognizer ready (\(recognizer.name), loaded in \((ContinuousClock.now - started).milliseconds) ms)")
            let made = PushToTalk(recognizer: recognizer, device: settings.captureDevice)
            ptt = made
            return made
        }
    }

    // MARK: commands

    func start(_ p: NoParams, _ ctx: InvocationContext) async throws(NodeError) -> JSONValue {
        let ptt = try session()
        speaker.interrupt()  // a new push-to-talk wins over the reply being spoken
        let started = try await Self.blocking { () throws(NodeError) in try ptt.start() }
        return ["captureId": .string(started.id)]
    }

    func stop(_ p: NoParams, _ ctx: InvocationContext) async throws(NodeError) -> JSONValue {
        let ptt = try session()
        guard let done = try await Self.blocking({ () throws(NodeError) in try ptt.stop() }) else {
            return ["captureId": .string(UUID().uuidString.lowercased()), "status": "idle"]
        }
        return await submit(done.id, done.transcript)
    }

    func cancel(_ p: NoParams, _ ctx: InvocationContext) async throws(NodeError) -> JSONValue {
        let ptt = try session()
        guard let id = try await Self.blocking({ () throws(NodeError) in ptt.cancel() }) else {
            return ["captureId": .string(UUID().uuidString.lowercased()), "status": "idle"]
        }
        return ["captureId": .string(id), "status": "cancelled"]
    }

    /// Starts a capture and stops it on speech followed by silence, or at 12 s; `busy` when a
    /// capture is already active or finishing.
    func once(_ p: NoParams, _ ctx: InvocationContext) async throws(NodeError) -> JSONValue {
        let ptt = try session()
        if let active = ptt.activeCaptureId { return ["captureId": .string(active), "status": "busy"] }
        speaker.interrupt()
        let endpoint = Endpoint()
        _ = try await Self.blocking { () throws(NodeError) in try ptt.start(onEndpoint: { endpoint.fire() }) }
        let timer = DeadlineTimer.shared.schedule(at: .now + PushToTalk.onceCap) { endpoint.fire() }
        await endpoint.wait()
        DeadlineTimer.shared.cancel(timer)
        guard let done = try await Self.blocking({ () throws(NodeError) in try ptt.stop() }) else {
            return ["captureId": .string(UUID().uuidString.lowercased()), "status": "idle"]
        }
        return await submit(done.id, done.transcript)
    }

    /// `queued` when the transcript went to the gateway as voice.transcript, `offline` when there
    /// is no connection to send it on, `empty` when nothing was recognised.
    private func submit(_ id: String, _ transcript: String) async -> JSONValue {
        guard !transcript.isEmpty else { return ["captureId": .string(id), "status": "empty"] }
        let link = lock.withLock { self.link }
        var status = "offline"
        if let link, await link.isConnected() {
            let payload: JSONValue = ["text": .string(transcript), "sessionKey": .string(link.mainSessionKey ?? "main"),
                                      "eventId": .string(id)]
            if await link.sendEvent("voice.transcript", payload) {
                status = "queued"
                // Follow the reply on that session and speak it when it is final.
                let key = link.mainSessionKey ?? "main"
                replies.arm(sessionKey: key)
                _ = await link.sendEvent("chat.subscribe", ["sessionKey": .string(key)])
            }
        }
        log.info("push-to-talk \(id.prefix(8)): \(transcript.count) characters, \(status)")
        return ["captureId": .string(id), "transcript": .string(transcript), "status": .string(status)]
    }

    /// chat.push {text, speak?}: a message for the person at the device, spoken here unless
    /// `speak` is false.
    func push(_ p: ChatPushParams, _ ctx: InvocationContext) async throws(NodeError) -> JSONValue {
        let id = UUID().uuidString.lowercased()
        if p.speak != false {
            let text = p.text ?? ""
            let voice = settings.voice
            let audio = try await Self.blocking { () throws(NodeError) in try EspeakVoice.synthesize(text, voice: voice) }
            let speaker = self.speaker
            Task { [log] in
                do throws(NodeError) { try await Self.blocking { () throws(NodeError) in
                    do throws(AudioPlayback.Failure) { try speaker.play(audio.samples, sampleRate: audio.sampleRate) } catch { throw NodeError.unavailable(error.description) }
                } } catch { log.warn("chat.push not spoken: \(error.message)") }
            }
        }
        return ["messageId": .string(id)]
    }

    /// Speaks `text` with the device's voice (espeak-ng) on the playback device.
    private func speak(_ text: String, why: String) async {
        let voice = settings.voice, speaker = self.speaker
        do throws(NodeError) {
            let seconds = try await Self.blocking { () throws(NodeError) -> Double in
                let audio = try EspeakVoice.synthesize(text, voice: voice)
                do throws(AudioPlayback.Failure) { try speaker.play(audio.samples, sampleRate: audio.sampleRate) } catch { throw NodeError.unavailable(error.description) }
                return Double(audio.samples.count) / Double(audio.sampleRate)
            }
            log.info("spoke \(why): \(text.count) characters, \((seconds).fixed(1)) s")
        } catch {
            log.warn("could not speak \(why): \(error.message)")
        }
    }

    /// Opening and closing ALSA devices blocks for up to ~100 ms: off the cooperative pool.
    private static func blocking<T: Sendable>(_ body: @escaping @Sendable () throws(NodeError) -> T) async throws(NodeError) -> T {
        try await BlockingThread.run("talk") { (_: CancelFlag) throws(NodeError) -> T in try body() }
    }
}

/// A one-shot signal for `once`: the first of endpoint and cap wins.
final class Endpoint: @unchecked Sendable {
    private let lock = Lock()
    private var fired = false
    private var waiter: CheckedContinuation<Void, Never>?

    func fire() {
        let w = lock.withLock { () -> CheckedContinuation<Void, Never>? in
            guard !fired else { return nil }
            fired = true
            defer { waiter = nil }
            return waiter
        }
        w?.resume()
    }

    func wait() async {
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            let resumeNow = lock.withLock { () -> Bool in
                if fired { return true }
                waiter = c
                return false
            }
            if resumeNow { c.resume() }
        }
    }
}
