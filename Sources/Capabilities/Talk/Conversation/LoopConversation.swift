import Kit
import Media
import Support

/// The continuous talk loop for gateways without a realtime provider, or for offline-first
/// devices: listen with the offline recognizer until speech and a silence window, hand the words
/// to the agent (chat.send on the operator session, else voice.transcript), wait until the reply
/// has been spoken (the gateway's voice or eSpeak NG), listen again. Speaking over the reply stops
/// it. Ends on talk.stop, a stop phrase, or `endAfterSilence` with nobody speaking.
final class LoopConversation: Sendable {
    /// What the loop needs of the talk capability.
    struct Hooks: Sendable {
        /// Sends a transcript to the agent: "queued", or "offline".
        let handOver: @Sendable (String) async -> String
        let isSpeaking: @Sendable () -> Bool
        let interruptReply: @Sendable () -> Void
    }
    /// How long a reply may take to come (Android waits 45 s).
    static let replyTimeout: Duration = .seconds(45)

    private struct State {
        var stopped = false
        var listening: Endpoint?
        var reply: (endpoint: Endpoint, spoken: Bool)?
        /// Replies finished so far (one may finish before the wait for it begins).
        var finished = 0
        var task: Task<Void, Never>?
    }
    private let state = Locked(State())
    private let ptt: PushToTalk
    private let settings: ConversationSettings
    private let captureDevice: String
    private let hooks: Hooks
    private let log: Logger
    private let done = Endpoint()

    init(ptt: PushToTalk, settings: ConversationSettings, captureDevice: String, hooks: Hooks, log: Logger,
         onEnd: @escaping @Sendable (String) -> Void) {
        self.ptt = ptt; self.settings = settings; self.captureDevice = captureDevice; self.hooks = hooks; self.log = log
        let task = Task { [self] in
            let why = await loop()
            _ = ptt.cancel()
            log.info("conversation ended: \(why)")
            onEnd(why)
            done.fire()
        }
        state.withLock { $0.task = task }
        log.info("conversation started (offline recognizer, replies spoken; say one of \(settings.stopPhrases.map { "\"\($0)\"" }.joined(separator: ", ")) to end it)")
    }

    private var stopped: Bool { state.withLock { $0.stopped } }

    /// Whether it has ended (on its own or by `stop`).
    var isEnded: Bool { done.hasFired }

    private func loop() async -> String {
        var idleSince = ContinuousClock.now
        while !stopped {
            let heard: String
            // Listening stops when the conversation would end for silence, or at the usual cap.
            let left = settings.endAfterSilence - (ContinuousClock.now - idleSince)
            do { heard = try await listen(cap: max(.seconds(2), min(PushToTalk.onceCap, left))) } catch { return "the microphone failed: \(error.message)" }
            if stopped { return "stopped" }
            if heard.isEmpty {
                if ContinuousClock.now - idleSince >= settings.endAfterSilence { return "nobody spoke for \(Int(settings.endAfterSilence.seconds)) s" }
                continue
            }
            log.info("heard: \(heard)")
            if settings.isStopPhrase(heard) { return "the person said \"\(heard)\"" }
            let before = state.withLock { $0.finished }
            let status = await hooks.handOver(heard)
            if status != "queued" {
                log.warn("the transcript could not go to the agent (\(status)); listening again")
                idleSince = .now
                continue
            }
            if !(await waitForReply(after: before)) { log.info("no reply was spoken within \(Int(Self.replyTimeout.seconds)) s; listening again") }
            idleSince = .now
        }
        return "stopped"
    }

    /// One turn of listening: speech then silence (or `cap`), recognised on the device.
    private func listen(cap: Duration) async throws(NodeError) -> String {
        let endpoint = Endpoint()
        state.withLock { $0.listening = endpoint }
        defer { state.withLock { $0.listening = nil } }
        if stopped { return "" }
        _ = try await TalkWork.blocking { [ptt] () throws(NodeError) in try ptt.start(onEndpoint: { endpoint.fire() }) }
        let timer = DeadlineTimer.shared.schedule(at: .now + cap) { endpoint.fire() }
        await endpoint.wait()
        DeadlineTimer.shared.cancel(timer)
        if stopped { return "" }
        return try await TalkWork.blocking { [ptt] () throws(NodeError) in try ptt.stop()?.transcript ?? "" }
    }

    /// Waits for the reply to be spoken; meanwhile speech at the microphone stops it.
    private func waitForReply(after finished: Int) async -> Bool {
        let monitor = settings.bargeIn ? try? MicrophoneCapture(device: captureDevice, sampleRate: 16_000, channels: 1) : nil
        let loud = Locked(0)
        monitor?.start { [hooks, settings, log] chunk in
            guard hooks.isSpeaking() else { loud.withLock { $0 = 0 }; return }
            let n = loud.withLock { c -> Int in c = RelayUplink.rms(chunk.samples) >= settings.bargeInLevel ? c + 1 : 0; return c }
            if n == 2 { log.info("the person spoke over the reply; stopped it"); hooks.interruptReply() }
        }
        defer { monitor?.stop() }
        let endpoint = Endpoint()
        let already = state.withLock { s -> Bool in
            s.reply = (endpoint, false)
            return s.finished != finished
        }
        if already { state.withLock { $0.reply = nil }; return true }
        if stopped { return false }
        let timer = DeadlineTimer.shared.schedule(at: .now + Self.replyTimeout) { endpoint.fire() }
        await endpoint.wait()
        DeadlineTimer.shared.cancel(timer)
        return state.withLock { s in defer { s.reply = nil }; return s.reply?.spoken ?? false }
    }

    /// The agent's reply has been spoken (or stopped): listening starts again.
    func replyFinished() {
        let endpoint = state.withLock { s -> Endpoint? in
            s.finished += 1
            s.reply?.spoken = true
            return s.reply?.endpoint
        }
        endpoint?.fire()
    }

    /// Ends the loop: the capture in progress is dropped.
    func stop() async {
        let endpoints = state.withLock { s -> [Endpoint] in s.stopped = true; return [s.listening, s.reply?.endpoint].compactMap { $0 } }
        for e in endpoints { e.fire() }
        hooks.interruptReply()
        await done.wait()
    }
}
