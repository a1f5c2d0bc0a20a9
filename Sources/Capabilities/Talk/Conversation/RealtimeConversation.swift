import Kit
import Media
import Support

/// One realtime spoken conversation through the gateway's relay (docs/PROTOCOL.md §6.6, talk mode): the
/// operator session creates it (talk.session.create: realtime, gateway-relay, agent-consult),
/// the microphone streams up (RelayUplink), the reply plays as it arrives (RelayPlayback), and
/// the provider's tool calls are answered by the agent (talk.client.toolCall → the chat final →
/// talk.session.submitToolResult). The relay belongs to the operator socket that created it: when
/// that socket drops, the conversation ends (upstream's clients do not resume one either).
final class RealtimeConversation: Sendable {
    /// iOS waits this long for `ready` after create, then gives up.
    static let readyTimeout: Duration = .seconds(12)
    /// How long a consult may take before the provider is told it failed (iOS: 120 s).
    static let consultTimeout: Duration = .seconds(120)

    private struct State {
        var relayId: String?
        /// Events that came before create answered (their session is not known yet).
        var early: [JSONValue] = []
        var ready = false
        var startupError: String?
        var ended = false
        var lastActivityNs = monotonicNowNs()
        /// The turn our barge-in cancelled, until the gateway's `clear` for it.
        var cancelledTurn: String?
        var consults: [String: CheckedContinuation<JSONValue?, Never>] = [:]  // runId → waiter
        var finishedRuns: [String: JSONValue] = [:]                            // runId → its chat final, if it came first
        var callRuns: [String: String] = [:]                                   // callId → runId
        var tasks: [Task<Void, Never>] = []
        /// Marks reached while our cancelOutput is on its way: acknowledged after it, so the
        /// gateway does not see the turn end before the cancellation arrives.
        var heldAcks: [String]?
    }
    private let state = Locked(State())
    private let session: OperatorSession
    private let settings: ConversationSettings
    let sessionKey: String
    private let log: Logger
    private let playback: RelayPlayback
    /// Full duplex's echo canceller (nil: half duplex, or the capture device cancels echo).
    private let echoCanceller: EchoCanceller?
    private let uplink: Locked<RelayUplink?> = Locked(nil)
    private let readySignal = Endpoint()
    private let endedSignal = Endpoint()
    private let onEnd: @Sendable (String) -> Void

    private init(session: OperatorSession, settings: ConversationSettings, sessionKey: String, playbackDevice: String,
                 echoCanceller: EchoCanceller?, log: Logger, onEnd: @escaping @Sendable (String) -> Void) {
        self.session = session; self.settings = settings; self.sessionKey = sessionKey; self.log = log; self.onEnd = onEnd
        self.echoCanceller = echoCanceller
        let marks = Locked<(@Sendable (String) -> Void)?>(nil)
        playback = RelayPlayback(device: playbackDevice, echoTail: settings.echoTail, reference: echoCanceller, log: log) { name in
            marks.withLock { $0 }?(name)
        }
        marks.withLock { $0 = { [weak self] name in self?.acknowledge(name) } }
    }

    /// Opens the microphone, creates the relay session and waits for the provider to be ready;
    /// then audio flows both ways until `stop`, the gateway's `close`, silence or a stop phrase.
    static func start(session: OperatorSession, settings: ConversationSettings, sessionKey: String,
                      captureDevice: String, playbackDevice: String, libraryDirectory: String?, log: Logger,
                      created: @Sendable (RealtimeConversation) -> Void,
                      onEnd: @escaping @Sendable (String) -> Void) async throws(NodeError) -> RealtimeConversation {
        var settings = settings
        var canceller: EchoCanceller?
        if settings.fullDuplex, settings.nodeEchoCanceller {
            do throws(NodeError) { canceller = try EchoCanceller(directory: libraryDirectory) } catch {
                // Full duplex without echo cancellation would have the provider answer itself.
                log.warn("\(error.message); the conversation is half duplex (or set capabilities.talk.mode.echoCanceller: \"device\" " +
                         "for a capture device that cancels echo itself)")
                settings.fullDuplex = false
            }
        }
        let c = RealtimeConversation(session: session, settings: settings, sessionKey: sessionKey, playbackDevice: playbackDevice,
                                     echoCanceller: canceller, log: log, onEnd: onEnd)
        created(c)  // its events may come before create answers: they are routed to it from now
        do throws(MicrophoneError) {
            let up = try RelayUplink(device: captureDevice, settings: settings, playback: c.playback, echoCanceller: canceller, log: log) { [weak c] in
                c?.bargeIn()
            }
            c.uplink.withLock { $0 = up }
        } catch {
            c.playback.stop()
            throw NodeError(error.kind == .busy ? TalkError.micBusy : .unavailable,
                            "\(error.description); set capabilities.talk.captureDevice to a capture device (arecord -L)")
        }
        do throws(NodeError) { try await c.create() } catch {
            await c.end("it could not start", closeRelay: c.state.withLock { $0.relayId } != nil, quiet: true)
            throw error
        }
        c.begin()
        return c
    }

    private func create() async throws(NodeError) {
        var params: [String: JSONValue] = ["sessionKey": .string(sessionKey), "mode": "realtime", "transport": "gateway-relay", "brain": "agent-consult"]
        for (key, value) in [("provider", settings.provider), ("model", settings.model), ("voice", settings.voice),
                             ("language", settings.language)] where !value.isEmpty {
            params[key] = .string(value)
        }
        let created: JSONValue
        switch await session.call(.talkSessionCreate, .object(params), timeout: .seconds(20)) {
        case .success(let r): created = r
        case .failure(let e):
            throw NodeError(.unavailable, "the gateway cannot start a realtime conversation: \(e.message)" + Self.hint(for: e))
        }
        guard let id = created["relaySessionId"]?.stringValue ?? created["sessionId"]?.stringValue else {
            throw NodeError(.unavailable, "the gateway's talk.session.create answer names no session")
        }
        let early = state.withLock { s -> [JSONValue] in s.relayId = id; defer { s.early = [] }; return s.early }
        for e in early where RelayEvent.session(of: e) == id { handle(e) }
        log.info("realtime conversation \(id.prefix(8)) created (\(created["provider"]?.stringValue ?? "the gateway's provider")); waiting for it to be ready")
        let timer = DeadlineTimer.shared.schedule(at: .now + Self.readyTimeout) { [readySignal] in readySignal.fire() }
        await readySignal.wait()
        DeadlineTimer.shared.cancel(timer)
        let (ready, why) = state.withLock { ($0.ready, $0.startupError) }
        guard ready else {
            throw NodeError(.unavailable, why.map { "the gateway's realtime provider failed to start: \($0)" }
                ?? "the gateway's realtime provider was not ready within \(Int(Self.readyTimeout.seconds)) s")
        }
    }

    /// What to do about a refusal of talk.session.create.
    private static func hint(for e: GatewayCallError) -> String {
        if e.message.contains("not configured") || e.message.contains("No realtime voice provider") {
            return " (on the gateway: talk.realtime.provider and its API key, talk.realtime.transport \"gateway-relay\")"
        }
        if e.message.lowercased().contains("scope") || e.code == "FORBIDDEN" {
            return " (the operator token lacks operator.talk: pair with a setup code from `openclaw qr --voice-node`)"
        }
        return ""
    }

    /// Audio starts flowing; the watchdog ends the conversation on silence or a lost session.
    private func begin() {
        guard let up = uplink.withLock({ $0 }) else { return }
        up.start { [weak self] e in Task { await self?.end("the microphone failed: \(e.description)", closeRelay: true) } }
        // The sender holds the conversation until the uplink stops (end() stops it).
        let sender = Task { [self] in await up.run { frame in await self.send(frame) } }
        let watchdog = Task { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(500))
                guard let self, await self.check() else { return }
            }
        }
        state.withLock { $0.tasks = [sender, watchdog] }
        let duplex = !settings.fullDuplex ? "half duplex" : echoCanceller.map { "full duplex, echo cancelled by \($0.version)" }
            ?? "full duplex, echo cancelled by the capture device"
        log.info("realtime conversation started: \(duplex)" +
                 (settings.bargeIn ? ", speaking over a reply stops it" : ""))
    }

    private func send(_ frame: RelayUplink.Frame) async -> Bool {
        guard let id = state.withLock({ $0.ended ? nil : $0.relayId }) else { return false }
        let bytes = frame.samples.withUnsafeBytes { Array($0) }  // PCM16 little-endian, as the hosts the node runs on
        let params: JSONValue = ["sessionId": .string(id), "audioBase64": .string(Base64.encode(bytes)), "timestamp": .number(Double(frame.timestampMs))]
        let sentAt = monotonicNowNs()
        switch await session.call(.talkSessionAppendAudio, params, timeout: .seconds(8)) {
        case .success:
            log.debug("uplink: \(frame.samples.count * 1000 / RelayPlayback.wireRate) ms sent \((sentAt - frame.capturedNs) / 1_000_000) ms after capture")
            return true
        case .failure(let e) where e.code == NodeError.Code.timeout.rawValue:
            log.warn("the gateway did not take microphone audio within 8 s; going on")
            return true
        case .failure(let e):
            await end("the gateway refused microphone audio: \(e.message)", closeRelay: e.code != NodeError.Code.connectionLost.rawValue)
            return false
        }
    }

    /// Every 500 ms: false once the conversation has ended.
    private func check() async -> Bool {
        if state.withLock({ $0.ended }) { return false }
        if await !session.isConnected() {
            await end("the operator session dropped (the relay belonged to it)", closeRelay: false)
            return false
        }
        if let failure = playback.failure {
            await end("the reply cannot be played: \(failure)", closeRelay: true)
            return false
        }
        let now = monotonicNowNs()
        let last = max(state.withLock { $0.lastActivityNs }, uplink.withLock { $0?.lastSpeechNs } ?? 0)
        if playback.isAudible { state.withLock { $0.lastActivityNs = now }; return true }
        if now - min(now, last) > UInt64(settings.endAfterSilence.milliseconds) * 1_000_000 {
            await end("nobody spoke for \(Int(settings.endAfterSilence.seconds)) s", closeRelay: true)
            return false
        }
        return true
    }

    // MARK: events

    /// A `talk.event` from the operator session (in the order the gateway sent them).
    func handle(_ payload: JSONValue) {
        let mine = state.withLock { s -> Bool? in
            guard !s.ended else { return false }
            guard let id = s.relayId else { s.early.append(payload); return nil }
            return RelayEvent.session(of: payload) == id
        }
        guard mine == true else { return }
        switch RelayEvent(payload) {
        case .ready:
            state.withLock { $0.ready = true }
            readySignal.fire()
        case .audio(let pcm, let turn):
            if state.withLock({ $0.cancelledTurn == turn }) { return }  // what our barge-in cancelled, still in flight
            playback.enqueue(pcm, turnId: turn)
        case .badAudio(let why):
            Task { await end("the gateway sent \(why)", closeRelay: true) }
        case .mark(let name):
            playback.mark(name)
        case .clear(let cancelled):
            playback.clear()
            let lift = state.withLock { s -> Bool in
                guard s.cancelledTurn == nil || cancelled == s.cancelledTurn else { return false }
                s.cancelledTurn = nil
                return true
            }
            if lift { uplink.withLock { $0 }?.liftFence() }
        case .transcript(let role, let text, let final):
            guard final else { return }
            state.withLock { $0.lastActivityNs = monotonicNowNs() }
            log.info("\(role == "user" ? "heard" : "replied"): \(text)")
            if role == "user", settings.isStopPhrase(text) {
                Task { await end("the person said \"\(text)\"", closeRelay: true) }
            }
        case .toolCall(let callId, let name, let args, let forced):
            hold { [self] in await runTool(callId: callId, name: name, args: args, forced: forced) }
        case .toolCallCancelled(let callId):
            let waiter = state.withLock { s in s.callRuns[callId].flatMap { s.consults.removeValue(forKey: $0) } }
            waiter?.resume(returning: nil)
        case .error(let message, let phase):
            log.warn("the realtime provider reports an error\(phase.map { " (\($0))" } ?? ""): \(message)")
            let startup = state.withLock { s -> Bool in
                guard !s.ready else { return false }
                s.startupError = message
                return true
            }
            if startup { readySignal.fire() }
        case .close(let reason):
            state.withLock { $0.startupError = $0.startupError ?? "the gateway closed it (\(reason))" }
            readySignal.fire()
            Task { await end("the gateway closed it (\(reason))", closeRelay: false) }
        case .audioDone, .ignored:
            break
        }
    }

    /// A `chat` event: the end of a consult's agent run.
    func chat(_ payload: JSONValue) {
        guard let run = payload["runId"]?.stringValue, let st = payload["state"]?.stringValue, ["final", "aborted", "error"].contains(st) else { return }
        let waiter = state.withLock { s -> CheckedContinuation<JSONValue?, Never>? in
            if let w = s.consults.removeValue(forKey: run) { return w }
            if s.finishedRuns.count > 32 { s.finishedRuns.removeAll() }
            s.finishedRuns[run] = payload
            return nil
        }
        waiter?.resume(returning: payload)
    }

    private func acknowledge(_ mark: String) {
        guard let id = state.withLock({ s -> String? in
            if s.heldAcks != nil { s.heldAcks?.append(mark); return nil }
            return s.ended ? nil : s.relayId
        }) else { return }
        hold { [self] in
            if case .failure(let e) = await session.call(.talkSessionAcknowledgeMark, ["sessionId": .string(id), "markName": .string(mark)], timeout: .seconds(8)) {
                log.debug("acknowledgeMark \(mark): \(e)")
            }
        }
    }

    /// Starts `body` as one of the conversation's tasks, which its end cancels; nothing once it
    /// has ended (checked under the same lock that end() takes them with).
    private func hold(_ body: @escaping @Sendable () async -> Void) {
        state.withLock { s in
            guard !s.ended else { return }
            s.tasks.append(Task(operation: body))
        }
    }

    /// The person spoke over the reply: stop it here now, and ask the gateway to cancel the turn.
    private func bargeIn() {
        guard let turn = playback.currentTurn, let id = state.withLock({ $0.ended ? nil : $0.relayId }) else {
            uplink.withLock { $0 }?.liftFence()
            return
        }
        state.withLock { $0.cancelledTurn = turn; $0.lastActivityNs = monotonicNowNs(); $0.heldAcks = [] }
        playback.clear()
        log.info("barge-in: the person spoke over the reply (\(turn)); stopped it")
        hold { [self] in
            let r = await session.call(.talkSessionCancelOutput, ["sessionId": .string(id), "turnId": .string(turn), "reason": "barge-in"],
                                       timeout: .seconds(8))
            let status = (try? r.get())?["status"]?.stringValue
            log.debug("cancelOutput \(turn): \(status ?? "no answer")")
            for mark in state.withLock({ s in defer { s.heldAcks = nil }; return s.heldAcks ?? [] }) { acknowledge(mark) }
            // Only an applied cancellation is answered with a clear; otherwise nothing will come.
            if status != "applied" {
                state.withLock { if $0.cancelledTurn == turn { $0.cancelledTurn = nil } }
                uplink.withLock { $0 }?.liftFence()
            } else {
                // The gateway completes a cancellation within about a second; never stay deaf longer.
                do { try await Task.sleep(for: .seconds(3)) } catch { return }  // the conversation ended
                if state.withLock({ $0.cancelledTurn == turn }) {
                    state.withLock { $0.cancelledTurn = nil }
                    uplink.withLock { $0 }?.liftFence()
                }
            }
        }
    }

    // MARK: tools

    private func runTool(callId: String, name: String, args: JSONValue, forced: Bool) async {
        guard let id = state.withLock({ $0.relayId }) else { return }
        func submit(_ result: JSONValue, willContinue: Bool = false) async {
            var p: [String: JSONValue] = ["sessionId": .string(id), "callId": .string(callId), "result": result]
            if willContinue { p["options"] = ["willContinue": true] }
            if case .failure(let e) = await session.call(.talkSessionSubmitToolResult, .object(p), timeout: .seconds(10)) {
                log.warn("submitToolResult \(callId): \(e)")
            }
        }
        switch name {
        case "openclaw_agent_consult":
            if forced {
                await submit(["status": "working", "tool": .string(name), "message": "Checking with the agent."], willContinue: true)
            }
            let call: JSONValue = ["sessionKey": .string(sessionKey), "callId": .string(callId), "name": .string(name),
                                   "args": args, "relaySessionId": .string(id)]
            let started = await session.call(.talkClientToolCall, call, timeout: .seconds(15))
            guard case .success(let ack) = started, let run = ack["runId"]?.stringValue else {
                let why = (try? started.get()).map { _ in "no runId" } ?? { if case .failure(let e) = started { return e.message }; return "" }()
                await submit(["error": .string("the agent consult did not start: \(why)")])
                return
            }
            log.info("the provider asked the agent (\(callId)); run \(run.prefix(8))")
            let final = await consultResult(run: run, callId: callId)
            guard !state.withLock({ $0.ended }) else { return }
            switch final?["state"]?.stringValue {
            case "final":
                await submit(["text": .string(ReplyTracker.text(of: final?["message"]))])
            case .some(let st):
                await submit(["error": .string("the agent run ended: \(st)")])
            case nil:
                if state.withLock({ $0.callRuns[callId] == nil }) { return }  // cancelled by the provider
                await submit(["error": .string("the agent did not answer within \(Int(Self.consultTimeout.seconds)) s")])
            }
        case "openclaw_agent_control":
            var p: [String: JSONValue] = ["sessionId": .string(id), "text": .string(args["text"]?.stringValue ?? "")]
            if let mode = args["mode"]?.stringValue { p["mode"] = .string(mode) }
            switch await session.call(.talkSessionSteer, .object(p), timeout: .seconds(15)) {
            case .success(let r): await submit(r)
            case .failure(let e): await submit(["error": .string(e.message)])
            }
        default:
            await submit(["error": .string("unsupported realtime Talk tool: \(name)")])
        }
    }

    /// The chat final of `run` (nil on timeout or when the provider cancelled the call).
    private func consultResult(run: String, callId: String) async -> JSONValue? {
        let timer = DeadlineTimer.shared.schedule(at: .now + Self.consultTimeout) { [weak self] in
            let w = self?.state.withLock { $0.consults.removeValue(forKey: run) }
            w?.resume(returning: nil)
        }
        defer { DeadlineTimer.shared.cancel(timer) }
        let result = await withCheckedContinuation { (c: CheckedContinuation<JSONValue?, Never>) in
            let now = state.withLock { s -> JSONValue?? in
                if s.ended { return .some(nil) }
                if let done = s.finishedRuns.removeValue(forKey: run) { return .some(done) }
                s.consults[run] = c
                s.callRuns[callId] = run
                return nil
            }
            if let now { c.resume(returning: now) }
        }
        state.withLock { _ = $0.callRuns.removeValue(forKey: callId) }
        return result
    }

    // MARK: end

    /// Ends the conversation from here (talk.stop).
    func stop() async { await end("stopped", closeRelay: true) }

    /// Waits until it has ended, however it ends.
    func ended() async { await endedSignal.wait() }

    var isEnded: Bool { state.withLock { $0.ended } }

    private func end(_ why: String, closeRelay: Bool, quiet: Bool = false) async {
        let (first, id, waiters, tasks) = state.withLock { s -> (Bool, String?, [CheckedContinuation<JSONValue?, Never>], [Task<Void, Never>]) in
            guard !s.ended else { return (false, nil, [], []) }
            s.ended = true
            defer { s.consults = [:]; s.tasks = [] }
            return (true, s.relayId, Array(s.consults.values), s.tasks)
        }
        guard first else { return }
        readySignal.fire()
        for w in waiters { w.resume(returning: nil) }
        uplink.withLock { $0 }?.stop()
        playback.stop()
        if closeRelay, let id {
            if case .failure(let e) = await session.call(.talkSessionClose, ["sessionId": .string(id)], timeout: .seconds(5)) {
                log.debug("talk.session.close: \(e)")
            }
        }
        for t in tasks { t.cancel() }
        if !quiet { log.info("realtime conversation ended: \(why)") }
        onEnd(why)
        endedSignal.fire()
    }
}
