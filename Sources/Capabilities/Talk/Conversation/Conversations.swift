import Kit
import Support

/// At most one spoken conversation at a time (talk.start, talk.stop, voice wake), and which kind:
/// realtime through the gateway's relay when the operator session can have one, else the loop of
/// offline recognizer and spoken replies (LoopConversation).
final class Conversations: Sendable {
    enum Active: Sendable {
        case realtime(RealtimeConversation)
        case loop(LoopConversation)
    }
    private struct State {
        var active: Active?
        var starting = false
        /// talk.catalog's answer about realtime, while the same operator session lasts.
        var catalog: (ready: Bool, why: String, at: ContinuousClock.Instant)?
        /// Conversations started since the daemon started, by kind (metrics).
        var started: [String: Int] = ["realtime": 0, "loop": 0]
        /// The device stays awake while a conversation lasts (a person is talking to it).
        var awake: KeepAwakeHold?

        mutating func setActive(_ a: Active?, keepAwake: any KeepAwake) {
            active = a
            if a == nil { awake?.release(); awake = nil } else if awake == nil { awake = keepAwake.hold("talk conversation") }
        }
    }
    private let state = Locked(State())
    let settings: ConversationSettings
    private let keepAwake: any KeepAwake
    private let log = Logger(component: "talk")

    init(settings: ConversationSettings, keepAwake: any KeepAwake = NoKeepAwake()) {
        self.settings = settings
        self.keepAwake = keepAwake
    }

    var isActive: Bool { state.withLock { $0.active != nil || $0.starting } }

    /// Which kind the next conversation is, and why (for status and the log).
    func plan(_ session: OperatorSession) async -> (realtime: Bool, why: String) {
        switch settings.kind {
        case .loop: return (false, "capabilities.talk.mode.conversation is \"loop\"")
        case .realtime, .auto:
            guard await session.isConnected() else {
                return (false, "no operator session (a setup code from `openclaw qr --voice-node`, or capabilities.talk.operator: true)")
            }
            let (ready, why) = await realtimeReady(session)
            if !ready, settings.kind == .realtime { return (true, why) }  // tried anyway: the gateway says why it fails
            return (ready, why)
        }
    }

    /// talk.catalog: whether the gateway has a realtime provider ready for the relay.
    private func realtimeReady(_ session: OperatorSession) async -> (Bool, String) {
        if let c = state.withLock({ $0.catalog }), ContinuousClock.now - c.at < .seconds(60) { return (c.ready, c.why) }
        let answer: (Bool, String)
        switch await session.call(.talkCatalog, [:], timeout: .seconds(10)) {
        case .success(let cat):
            let provider = cat["activeProvider"]?.stringValue ?? cat["realtime"]?["provider"]?.stringValue
            if cat["realtime"]?["ready"]?.boolValue == true {
                answer = (true, "realtime through the gateway (\(provider ?? "its provider"))")
            } else {
                answer = (false, "the gateway has no realtime provider ready (talk.realtime.provider, its API key, talk.realtime.transport \"gateway-relay\")")
            }
        case .failure(let e):
            answer = (false, "the gateway's talk.catalog failed: \(e.message)")
        }
        state.withLock { $0.catalog = (answer.0, answer.1, .now) }
        return answer
    }

    /// Forget the catalog (a new operator session may reach another gateway or configuration).
    func sessionChanged() { state.withLock { $0.catalog = nil } }

    /// Starts one; false when one is active already. `begin` makes the kind chosen.
    func start(_ begin: @Sendable (Bool) async throws(NodeError) -> Active, realtime: Bool) async throws(NodeError) -> Bool {
        let claimed = state.withLock { s -> Bool in
            guard s.active == nil, !s.starting else { return false }
            s.starting = true
            return true
        }
        guard claimed else { return false }
        do {
            let a = try await begin(realtime)
            let ended: Bool
            switch a {
            case .realtime(let c): ended = c.isEnded
            case .loop(let c): ended = c.isEnded
            }
            // One that ended already (a stop phrase at once, the session dropping) is not active.
            state.withLock {
                $0.setActive(ended ? nil : a, keepAwake: keepAwake)
                $0.starting = false
                $0.started[Self.kind(a), default: 0] += 1
            }
            pendingRealtime.withLock { $0 = nil }
            return true
        } catch {
            state.withLock { $0.starting = false }
            pendingRealtime.withLock { $0 = nil }
            throw error
        }
    }

    static func kind(_ a: Active) -> String {
        switch a {
        case .realtime: return "realtime"
        case .loop: return "loop"
        }
    }

    /// The metrics of `ReportsMetrics`: the conversation running now and those started so far.
    var metrics: [MetricFamily] {
        let (active, started) = state.withLock { ($0.active.map(Self.kind), $0.started) }
        return [
            MetricFamily("talk_conversation_active", .gauge, "1 while a spoken conversation of this kind holds the microphone.",
                         ["realtime", "loop"].map { .init([("kind", $0)], active == $0 ? 1 : 0) }),
            MetricFamily("talk_conversations_total", .counter, "Spoken conversations started (talk.start, voice wake), by kind.",
                         started.keys.sorted().map { .init([("kind", $0)], Double(started[$0]!)) }),
        ]
    }

    /// Called by a conversation as it ends.
    func ended() { state.withLock { $0.setActive(nil, keepAwake: keepAwake) } }

    /// Ends the active one; false when there was none.
    func stop() async -> Bool {
        guard let a = state.withLock({ $0.active }) else { return false }
        switch a {
        case .realtime(let c): await c.stop()
        case .loop(let c): await c.stop()
        }
        state.withLock { $0.setActive(nil, keepAwake: keepAwake) }
        return true
    }

    func talkEvent(_ payload: JSONValue) {
        if case .realtime(let c) = state.withLock({ $0.active }) { c.handle(payload) }
        // Events for a conversation still being created: it keeps them until it knows its id.
        else if let starting = pendingRealtime.withLock({ $0 }) { starting.handle(payload) }
    }

    /// The realtime conversation being created (its events may come before create answers).
    let pendingRealtime = Locked<RealtimeConversation?>(nil)

    func chat(_ payload: JSONValue) {
        if case .realtime(let c) = state.withLock({ $0.active }) { c.chat(payload) }
    }

    /// A reply was spoken on the device (or stopped): the loop listens again.
    func replyFinished() {
        if case .loop(let c) = state.withLock({ $0.active }) { c.replyFinished() }
    }

    /// For `status`: what a conversation would be now.
    func statusLine(_ session: OperatorSession, microphone: String?) async -> String {
        if let a = state.withLock({ $0.active }) {
            switch a {
            case .realtime: return "in a realtime conversation (talk.stop ends it)"
            case .loop: return "in a conversation (listen, reply, listen; talk.stop ends it)"
            }
        }
        if let microphone { return "no conversation possible: \(microphone)" }
        let p = await plan(session)
        return p.realtime ? "talk.start holds a realtime conversation: \(p.why)"
                          : "talk.start holds a conversation with the offline recognizer (\(p.why))"
    }
}
