import Config
import Glibc
import Kit
import Media
import Support

/// Push-to-talk (docs/PROTOCOL.md §6.6): talk.ptt.start/stop/cancel/once record from the
/// microphone, recognise speech on the device (pocketsphinx), and hand the transcript to the agent:
/// with `chat.send` on the operator session when the node has one (as the iOS and Android apps
/// do), else with `voice.transcript` on the node session. Results are shaped as the iOS and
/// Android nodes return them.
final class TalkCapability: Capability, CapabilityLifecycle, GatewaySessionAware, PresenceAware, SelfDiagnosing, AdvertisesExtraCaps,
                            ReportsStatus, ReportsMetrics, ReportsActivity, Sendable {
    let manifest: BundleManifest
    let settings: TalkSettings
    private let log = Logger(component: "talk")
    private struct State {
        var ptt: PushToTalk?
        var link: GatewayLink?
        /// voicewake.routing.changed: trigger phrase → session key.
        var routes: [String: String] = [:]
    }
    private let state = Locked(State())
    private let replies = ReplyTracker()
    let voice: ReplySpeaker
    let wake: VoiceWake
    let conversations: Conversations
    /// Replies being spoken now (the loop's barge-in listens only then).
    private let speaking = Locked(0)
    /// Replies being spoken beside the event queue; shutdown stops them.
    private let replyTasks = OwnedTasks()

    init(manifest: BundleManifest, settings: TalkSettings, stateDirectory: String, keepAwake: any KeepAwake = NoKeepAwake()) {
        self.manifest = manifest
        self.settings = settings
        voice = ReplySpeaker(settings: settings, speaker: AudioPlayback(device: settings.playbackDevice))
        conversations = Conversations(settings: settings.conversation, keepAwake: keepAwake)
        // The wake's handler needs a weak self, which exists only once every stored property
        // is set: it reaches this object through a relay filled in last.
        let relay = WakeRelay()
        wake = VoiceWake(settings: settings, keywordFile: stateDirectory + "/voice-wake-phrases.txt") { trigger, transcript in
            await relay.target.withLock { $0 }?.wakeCommand(trigger: trigger, transcript: transcript)
        }
        relay.target.withLock { $0 = WeakTalk(self) }
    }

    /// `capabilities.talk.operator: true` asks for an operator session even without a token (the
    /// gateway then asks an operator to approve the device as one); otherwise a token a setup code
    /// handed over is used when there is one.
    var operatorSessionUse: OperatorSessionUse { settings.operatorSession ? .always : .whenTokenHeld }

    /// Advertised while voice wake is on and its recognizer is loaded.
    var extraCaps: [String] { settings.voiceWake && state.withLock({ $0.ptt != nil }) ? ["voiceWake"] : [] }

    /// The agent's replies arrive as `chat` events on the session the transcript went to; the
    /// gateway pushes its wake phrases and their routes after every connect and on change.
    /// The agent's replies arrive as `chat` events on the session the transcript went to; the
    /// gateway pushes its wake phrases and their routes after every connect and on change; a
    /// realtime conversation's events come as `talk.event` on the operator session.
    var gatewayEvents: Set<String> { ["chat", "voicewake.changed", "voicewake.routing.changed", "talk.event"] }

    func gatewayEvent(_ name: String, _ payload: JSONValue) async {
        switch name {
        case "talk.event":
            conversations.talkEvent(payload)
        case "chat":
            conversations.chat(payload)
            if let text = replies.handle(payload) {
                // Spoken beside the event queue, which must not wait for speech to end.
                let session = state.withLock { $0.link }?.operatorSession
                replyTasks.start { [self] in
                    speaking.withLock { $0 += 1 }
                    await voice.speak(text, why: "the agent's reply", operatorSession: session)
                    speaking.withLock { $0 -= 1 }
                    conversations.replyFinished()
                }
            }
        case "voicewake.changed":
            wake.setTriggers(payload["triggers"]?.arrayValue?.compactMap(\.stringValue) ?? [])
        case "voicewake.routing.changed":
            var map: [String: String] = [:]
            for r in payload["config"]?["routes"]?.arrayValue ?? [] {
                if let t = r["trigger"]?.stringValue, let key = r["target"]?["sessionKey"]?.stringValue { map[t.lowercased()] = key }
            }
            state.withLock { $0.routes = map }
        default:
            break
        }
    }

    func presenceChanged(foreground: Bool) async { wake.setForeground(foreground) }

    /// A wake phrase and what followed it: the words after the phrase go to the agent, or (with
    /// capabilities.talk.mode.startOnWake) a conversation starts.
    fileprivate func wakeCommand(trigger: String, transcript: String) async {
        if settings.conversation.startOnWake {
            do { _ = try await startConversation() } catch { log.warn("voice wake \"\(trigger)\": no conversation: \(error.message)") }
            return
        }
        let command = Self.command(after: trigger, in: transcript)
        guard !command.isEmpty else {
            log.info("voice wake: nothing recognised after \"\(trigger)\"")
            log.debug("voice wake heard: \(transcript)")
            return
        }
        let route = state.withLock { $0.routes[trigger.lowercased()] }
        let status = await handOver(command, eventId: SecureRandom.uuid(), sessionKey: route)
        log.info("voice wake \"\(trigger)\": \(command.count) characters, \(status)")
    }

    /// The words after the last occurrence of `trigger` in `transcript` ("" when it is not there).
    static func command(after trigger: String, in transcript: String) -> String {
        let words = transcript.lowercased().split(separator: " ").map(String.init)
        let phrase = trigger.lowercased().split(separator: " ").map(String.init)
        guard !phrase.isEmpty, words.count > phrase.count else { return "" }
        for start in stride(from: words.count - phrase.count, through: 0, by: -1) where Array(words[start..<(start + phrase.count)]) == phrase {
            return words[(start + phrase.count)...].joined(separator: " ")
        }
        return ""
    }

    var handlers: [CommandHandler] { TalkCommands.handlers(self) }

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
        let ptt: PushToTalk
        // Loading the model reads tens of megabytes: off the cooperative pool.
        do { ptt = try await TalkWork.blocking { [self] () throws(NodeError) in try session() } } catch { return .unavailable(error.message) }
        if settings.voiceWake { wake.attach(ptt) }
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
        // The gateway's voice (talk.speak) may come as MP3 or Ogg/Opus whatever the node asks for.
        let problems = [("MP3", MP3Decoder.libraryProblem), ("Ogg/Opus", OggOpusDecoder.libraryProblem)].filter { $0.1 != nil }
        if problems.isEmpty {
            out.append(Diagnosis(.ok, "the gateway's voice plays as PCM, WAV, MP3 (libmpg123) and Ogg/Opus (libopusfile)"))
        }
        for (format, problem) in problems {
            out.append(Diagnosis(.warn, "the gateway's voice in \(format) cannot be played (espeak-ng speaks instead): \(problem!)"))
        }
        out.append(Diagnosis(.ok, settings.operatorSession
            ? "operator session on (capabilities.talk.operator): chat.send and talk.speak; approve it once on the gateway (openclaw-node status names the request)"
            : "operator session only with a setup code's operator token (capabilities.talk.operator: false); else voice.transcript and espeak-ng"))
        let c = settings.conversation
        switch c.kind {
        case .loop:
            out.append(Diagnosis(.ok, "talk.start holds listen-and-reply conversations (capabilities.talk.mode.conversation: loop)"))
        case .realtime, .auto:
            out.append(Diagnosis(.ok, "talk.start holds realtime conversations through the gateway when it has a realtime provider " +
                                 "(talk.realtime.provider, transport gateway-relay) and the node an operator session" +
                                 (c.kind == .auto ? ", else listen-and-reply" : "") + "; openclaw-node status says which, now"))
        }
        out.append(Diagnosis(.ok, c.fullDuplex
            ? "full duplex: the microphone stays open while replies play — the capture device must cancel echo itself (PipeWire echo-cancel, a speakerphone)"
            : "half duplex: the microphone is not sent while a reply plays\(c.bargeIn ? "; speaking over a reply stops it" : "")"))
        return out
    }

    func gatewayConnected(_ link: GatewayLink) async {
        state.withLock { $0.link = link }
        conversations.sessionChanged()
        // The gateway forgets a node's subscriptions when it disconnects: renew a pending one.
        if replies.isArmed, let key = replies.sessionKey { _ = await link.send(.chatSubscribe, ["sessionKey": .string(key)]) }
    }
    func gatewayDisconnected() async {}
    func shutdown() async {
        _ = await conversations.stop()
        _ = state.withLock { $0.ptt }?.cancel()
        voice.interrupt()
        // Side by side: each waits for what it started (cancelled, so briefly).
        async let wakeEnded: Void = wake.shutdown()
        async let repliesEnded = replyTasks.cancelAll()
        async let voiceEnded: Void = voice.shutdown()
        _ = await (wakeEnded, repliesEnded, voiceEnded)
    }

    func session() throws(NodeError) -> PushToTalk {
        try state.withLock { (s: inout State) throws(NodeError) -> PushToTalk in
            if let ptt = s.ptt { return ptt }
            let started = ContinuousClock.now
            let recognizer = try PocketSphinxRecognizer(modelDir: settings.modelDir)
            log.info("speech recognizer ready (\(recognizer.name), loaded in \((ContinuousClock.now - started).milliseconds) ms)")
            let made = PushToTalk(recognizer: recognizer, device: settings.captureDevice, releaseAfter: settings.releaseModelAfter)
            s.ptt = made
            return made
        }
    }

    // MARK: commands

    func start(_ p: NoParams, _ ctx: InvocationContext) async throws(NodeError) -> TalkPttResult {
        try refuseDuringConversation()
        let ptt = try session()
        voice.interrupt()  // a new push-to-talk wins over the reply being spoken
        wake.pause()         // and over voice wake, which gives the microphone back
        let started: (id: String, new: Bool)
        do { started = try await TalkWork.blocking { () throws(NodeError) in try ptt.start() } } catch { wake.resume(); throw error }
        return TalkPttResult(captureId: started.id)
    }

    func stop(_ p: NoParams, _ ctx: InvocationContext) async throws(NodeError) -> TalkPttResult {
        let ptt = try session()
        defer { wake.resume() }
        guard let done = try await TalkWork.blocking({ () throws(NodeError) in try ptt.stop() }) else { return .idle() }
        return await submit(done.id, done.transcript)
    }

    func cancel(_ p: NoParams, _ ctx: InvocationContext) async throws(NodeError) -> TalkPttResult {
        let ptt = try session()
        defer { wake.resume() }
        guard let id = try await TalkWork.blocking({ () throws(NodeError) in ptt.cancel() }) else { return .idle() }
        return TalkPttResult(captureId: id, status: "cancelled")
    }

    /// Starts a capture and stops it on speech followed by silence, or at 12 s; `busy` when a
    /// capture is already active or finishing.
    func once(_ p: NoParams, _ ctx: InvocationContext) async throws(NodeError) -> TalkPttResult {
        try refuseDuringConversation()
        let ptt = try session()
        if let active = ptt.activeCaptureId { return TalkPttResult(captureId: active, status: "busy") }
        guard let done = try await listenOnce(ptt, cap: PushToTalk.onceCap) else { return .idle() }
        // Cancelled while it listened: the words go nowhere.
        if Task.isCancelled { return TalkPttResult(captureId: done.id, status: "cancelled") }
        return await submit(done.id, done.transcript)
    }

    /// One capture that ends on speech then silence, or at `cap` (`endOnSilence` false: only at
    /// `cap`, a recording of fixed length): what was said, nil when no capture was made.
    func listenOnce(_ ptt: PushToTalk, cap: Duration, endOnSilence: Bool = true) async throws(NodeError) -> (id: String, transcript: String)? {
        voice.interrupt()
        wake.pause()
        defer { wake.resume() }
        let endpoint = Endpoint()
        var onEndpoint: (@Sendable () -> Void)?
        if endOnSilence { onEndpoint = { endpoint.fire() } }
        let handler = onEndpoint
        let started = try await TalkWork.blocking { () throws(NodeError) in try ptt.start(onEndpoint: handler) }
        // Not one's own: someone else's capture is running, which this must not end.
        guard started.new else { throw NodeError(TalkError.pttBusy, "push-to-talk is in use; try again when it ends") }
        let timer = DeadlineTimer.shared.schedule(at: .now + cap) { endpoint.fire() }
        await withTaskCancellationHandler { await endpoint.wait() } onCancel: { endpoint.fire() }
        DeadlineTimer.shared.cancel(timer)
        return try await TalkWork.blocking { () throws(NodeError) in try ptt.stop() }
    }

    /// `queued` when the transcript went to the gateway as voice.transcript, `offline` when there
    /// is no connection to send it on, `empty` when nothing was recognised.
    private func submit(_ id: String, _ transcript: String) async -> TalkPttResult {
        guard !transcript.isEmpty else { return TalkPttResult(captureId: id, status: "empty") }
        let status = await handOver(transcript, eventId: id, sessionKey: nil)
        log.info("push-to-talk \(id.prefix(8)): \(transcript.count) characters, \(status)")
        return TalkPttResult(captureId: id, status: status, transcript: transcript)
    }

    /// Sends `text` to the agent and follows the reply to speak it: "queued", or "offline" when
    /// there is no connection to send it on. `sessionKey` nil = the main session.
    private func handOver(_ text: String, eventId: String, sessionKey: String?) async -> String {
        guard let link = state.withLock({ $0.link }) else { return "offline" }
        let key = sessionKey ?? link.mainSessionKey ?? "main"
        // The apps' way: chat.send on the operator session. The gateway names the run after the
        // idempotency key, so the reply is followed from before the ack (it may come first).
        if await link.operatorSession.isConnected() {
            let request = ChatSendRequest(sessionKey: key, message: text, idempotencyKey: eventId)
            replies.arm(sessionKey: key, runId: eventId)
            var reply = await link.operatorSession.chatSend(request, timeout: .seconds(10))
            if case .failure(let e) = reply, Self.mayHaveArrived(e), await link.operatorSession.isConnected() {
                // No answer, or the connection dropped after sending: the same key again is
                // harmless (the gateway answers a repeat with the run it already started).
                reply = await link.operatorSession.chatSend(request, timeout: .seconds(10))
            }
            switch reply {
            case .success(let ack):
                if let run = ack.runId, run != eventId { replies.arm(sessionKey: key, runId: run) }
                log.debug("chat.send: run \(ack.runId ?? eventId) \(ack.status ?? "")")
                return "queued"
            case .failure(let e) where Self.mayHaveArrived(e):
                // It may have reached the agent: sending it again another way could run it twice.
                log.warn("chat.send on the operator session got no answer (\(e)); not sending the transcript again")
                return "offline"
            case .failure(let e):
                log.warn("the gateway refused chat.send (\(e)); handing the transcript over on the node session")
            }
        }
        guard await link.isConnected() else { return "offline" }
        let payload: JSONValue = ["text": .string(text), "sessionKey": .string(key), "eventId": .string(eventId)]
        guard await link.send(.voiceTranscript, payload) else { return "offline" }
        // Follow the reply on that session and speak it when it is final.
        replies.arm(sessionKey: key)
        _ = await link.send(.chatSubscribe, ["sessionKey": .string(key)])
        return "queued"
    }

    /// A failure after which the request may still have reached the gateway (no reply in time, or
    /// the connection ended while waiting), as opposed to the gateway's own refusal.
    static func mayHaveArrived(_ e: GatewayCallError) -> Bool {
        e.code == NodeError.Code.timeout.rawValue || e.code == NodeError.Code.connectionLost.rawValue
    }

    // MARK: conversations

    func metrics() async -> [MetricFamily] { conversations.metrics }

    /// What a restart waits for: a conversation, or a push-to-talk capture held open.
    func activity() async -> String? {
        if conversations.isActive { return "a talk conversation" }
        if let capture = state.withLock({ $0.ptt })?.activeCaptureId { return "push-to-talk capture \(capture.prefix(8))" }
        return nil
    }

    func refuseDuringConversation() throws(NodeError) {
        if conversations.isActive { throw NodeError(TalkError.micBusy, "a conversation holds the microphone; talk.stop ends it") }
    }

    /// talk.start {}: a spoken conversation with the agent, as the ESP room node's command starts
    /// one — `{started: true}`, or `{started: false, alreadyActive: true}`.
    func talkStart(_ p: NoParams, _ ctx: InvocationContext) async throws(NodeError) -> TalkStartResult {
        try await startConversation() ? TalkStartResult(started: true) : TalkStartResult(started: false, alreadyActive: true)
    }

    /// talk.stop {}: ends it — `{stopped: true}`, or false when none was active.
    func talkStop(_ p: NoParams, _ ctx: InvocationContext) async throws(NodeError) -> TalkStopResult {
        TalkStopResult(stopped: await conversations.stop())
    }

    private func startConversation() async throws(NodeError) -> Bool {
        guard let link = state.withLock({ $0.link }) else { throw NodeError(.unavailable, "not connected to a gateway; the node reconnects by itself") }
        if let capture = state.withLock({ $0.ptt })?.activeCaptureId {
            throw NodeError(TalkError.micBusy, "push-to-talk \(capture.prefix(8)) holds the microphone")
        }
        let plan = await conversations.plan(link.operatorSession)
        log.info("starting a conversation: \(plan.realtime ? "realtime" : "listen and reply") (\(plan.why))")
        return try await conversations.start({ [self] realtime throws(NodeError) in try await begin(realtime: realtime, link) }, realtime: plan.realtime)
    }

    private func begin(realtime: Bool, _ link: GatewayLink) async throws(NodeError) -> Conversations.Active {
        voice.interrupt()
        wake.pause()
        let ended: @Sendable (String) -> Void = { [weak self] _ in
            self?.conversations.ended()
            self?.wake.resume()
        }
        do throws(NodeError) {
            if realtime {
                let c = try await RealtimeConversation.start(
                    session: link.operatorSession, settings: settings.conversation, sessionKey: link.mainSessionKey ?? "main",
                    captureDevice: settings.captureDevice, playbackDevice: settings.playbackDevice,
                    libraryDirectory: settings.libraryDirectory, log: log,
                    created: { [conversations] c in conversations.pendingRealtime.withLock { $0 = c } }, onEnd: ended)
                return .realtime(c)
            }
            let ptt = try session()
            let hooks = LoopConversation.Hooks(
                handOver: { [weak self] text in await self?.handOver(text, eventId: SecureRandom.uuid(), sessionKey: nil) ?? "offline" },
                isSpeaking: { [speaking] in speaking.withLock { $0 > 0 } },
                interruptReply: { [voice] in voice.interrupt() })
            return .loop(LoopConversation(ptt: ptt, settings: settings.conversation, captureDevice: settings.captureDevice, hooks: hooks,
                                          log: log, onEnd: ended))
        } catch {
            wake.resume()
            throw error
        }
    }

    func statusLine() async -> String {
        let session = state.withLock { $0.link }?.operatorSession ?? .none
        return await conversations.statusLine(session, microphone: nil)
    }

    /// chat.push {text, speak?}: a message for the person at the device, spoken here unless
    /// `speak` is false.
    func push(_ p: ChatPushParams, _ ctx: InvocationContext) async throws(NodeError) -> ChatPushResult {
        let id = SecureRandom.uuid()
        if p.speak { try await voice.speakLocally(p.text) }
        return ChatPushResult(messageId: id)
    }

}

/// A one-shot signal for `once`: the first of endpoint and cap wins.
final class Endpoint: Sendable {
    private struct State {
        var fired = false
        var waiter: CheckedContinuation<Void, Never>?
    }
    private let state = Locked(State())

    var hasFired: Bool { state.withLock { $0.fired } }

    func fire() {
        let w = state.withLock { s -> CheckedContinuation<Void, Never>? in
            guard !s.fired else { return nil }
            s.fired = true
            defer { s.waiter = nil }
            return s.waiter
        }
        w?.resume()
    }

    func wait() async {
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            let resumeNow = state.withLock { s -> Bool in
                if s.fired { return true }
                s.waiter = c
                return false
            }
            if resumeNow { c.resume() }
        }
    }
}

/// Where voice wake's commands go: the capability, held weakly (it owns the wake).
private final class WakeRelay: Sendable {
    let target = Locked<WeakTalk?>(nil)
}

private struct WeakTalk: Sendable {
    weak var talk: TalkCapability?
    init(_ talk: TalkCapability) { self.talk = talk }
    func wakeCommand(trigger: String, transcript: String) async { await talk?.wakeCommand(trigger: trigger, transcript: transcript) }
}
