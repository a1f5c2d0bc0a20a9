import Glibc
import Kit
import Media
import Support

/// Voice wake: while enabled, someone is at the device, the gateway has sent its trigger phrases and
/// push-to-talk is not using the microphone, one microphone listens and a keyword search looks for
/// the phrases — with push-to-talk's own decoder, switched to its keyword search, so the model is in
/// memory once. On a hit the same microphone keeps recording the command into that recognizer (the
/// audio of the last few seconds first) until speech is followed by silence (or 10 s).
final class VoiceWake: Sendable {
    /// What a hit leads to: the phrase heard and the command's transcript (owner hands it over).
    typealias CommandHandler = @Sendable (_ trigger: String, _ transcript: String) async -> Void

    static let commandCap: Duration = .seconds(10)
    /// Audio kept from before the hit, so the recognizer hears the phrase and what came with it.
    static let preambleSamples = 16_000 * 3

    private struct State {
        var ptt: PushToTalk?
        var phrases: [String] = []
        var foreground = false
        var pausedForPTT = false
        var listener: Listener?
        /// After the microphone failed: the pending retry, and the delay before the next one.
        var retryTimer: DeadlineTimer.Token?
        var retryDelay: Duration?
    }
    private let state = Locked(State())
    /// Held for a whole `update()` (it guards a procedure, no value), so two updates (a presence
    /// change, the end of a command) cannot both decide while a listener is being opened. Taken
    /// before `state`.
    private let updates = Locked(())
    /// Wake commands being recorded and handed on; shutdown waits for them.
    private let commands = OwnedTasks()
    private let log = Logger(component: "talk")
    private let settings: TalkSettings
    private let keywordFile: String
    private let onCommand: CommandHandler

    init(settings: TalkSettings, keywordFile: String, onCommand: @escaping CommandHandler) {
        self.settings = settings
        self.keywordFile = keywordFile
        self.onCommand = onCommand
    }

    var isListening: Bool { state.withLock { $0.listener != nil } }

    /// The daemon is up and the recognizer is loaded.
    func attach(_ ptt: PushToTalk) { state.withLock { $0.ptt = ptt }; update() }

    /// `voicewake.changed`: the gateway's trigger phrases.
    func setTriggers(_ triggers: [String]) {
        let split = WakePhrases.spottable(triggers, modelDir: settings.modelDir)
        if !split.unknown.isEmpty {
            log.warn("voice wake cannot listen for \(split.unknown.map { "\"\($0)\"" }.joined(separator: ", ")): not in the English pronunciation dictionary")
        }
        let changed = state.withLock { s -> Bool in
            defer { s.phrases = split.usable }
            return s.phrases != split.usable
        }
        if changed { restart() }
    }

    func setForeground(_ value: Bool) { state.withLock { $0.foreground = value }; update() }

    /// Push-to-talk takes the microphone; wake gives it back first and listens again afterwards.
    func pause() {
        updates.withLock { _ in
            let old = state.withLock { s -> Listener? in s.pausedForPTT = true; defer { s.listener = nil }; return s.listener }
            close(old, why: "push-to-talk")
        }
    }

    func resume() { state.withLock { $0.pausedForPTT = false }; update() }

    /// The capability's end: stop listening, then let a command being recorded finish or stop.
    func shutdown() async {
        stop()
        await commands.cancelAll()
    }

    func stop() {
        if let t = state.withLock({ s -> DeadlineTimer.Token? in defer { s.retryTimer = nil }; return s.retryTimer }) { DeadlineTimer.shared.cancel(t) }
        updates.withLock { _ in
            let old = state.withLock { s -> Listener? in s.ptt = nil; defer { s.listener = nil }; return s.listener }
            close(old, why: "stopping")
        }
    }

    private func restart() {
        updates.withLock { _ in
            let old = state.withLock { s -> Listener? in defer { s.listener = nil }; return s.listener }
            close(old, why: "new phrases")
        }
        update()
    }

    private func close(_ l: Listener?, why: String) {
        guard let l else { return }
        l.stop()
        log.info("microphone closed (voice wake: \(why))")
    }

    /// Starts or stops listening to match the conditions.
    func update() { updates.withLock { _ in updateLocked() } }

    private func updateLocked() {
        let (want, current, wanted, foreground) = state.withLock { s -> (Bool, PushToTalk?, [String], Bool) in
            (s.ptt != nil && !s.phrases.isEmpty && s.foreground && !s.pausedForPTT && settings.voiceWake, s.ptt, s.phrases, s.foreground)
        }
        if !want {
            let old = state.withLock { s -> Listener? in defer { s.listener = nil }; return s.listener }
            close(old, why: foreground ? "paused" : "nobody at the device")
            return
        }
        guard state.withLock({ $0.listener == nil }), let current, current.activeCaptureId == nil else { return }
        do throws(NodeError) {
            if let why = PrivateDirectory.create(PathName.directory(keywordFile)) { throw NodeError(.unavailable("talk"), why) }
            let l = try Listener(device: settings.captureDevice, phrases: wanted, keywordFile: keywordFile, ptt: current)
            state.withLock { $0.listener = l; $0.retryDelay = nil }
            l.start(onFailure: { [weak self] failed, error in self?.microphoneFailed(failed, error) }) { [weak self] trigger, capture in
                self?.commandStarted(trigger, capture)
            }
            log.info("microphone open (\(settings.captureDevice)) for voice wake: \(wanted.map { "\"\($0)\"" }.joined(separator: ", "))")
        } catch {
            retryLater("voice wake cannot listen: \(error.message)")
        }
    }

    /// The microphone could not be opened or stopped working: listen again later (a device that
    /// was unplugged may come back), waiting longer each time up to 5 minutes; the first failure
    /// is a warning, the repeats are logged at debug.
    private func retryLater(_ why: String) {
        let delay = state.withLock { s -> Duration? in
            let next = s.retryDelay.map { min($0 * 2, Self.retryCap) } ?? Self.retryAfterFailure
            defer { s.retryDelay = next }
            return s.retryTimer == nil ? next : nil
        }
        guard let delay else { return }  // one retry is pending already
        if delay == Self.retryAfterFailure { log.warn("\(why); trying again in \(delay)") } else { log.debug("\(why); trying again in \(delay)") }
        let token = DeadlineTimer.shared.schedule(at: .now + delay) { [weak self] in
            guard let wake = self else { return }
            wake.state.withLock { $0.retryTimer = nil }
            BlockingExecutor.start("wake-retry") { wake.update() }
        }
        state.withLock { $0.retryTimer = token }
    }

    static let retryAfterFailure: Duration = .seconds(10)
    static let retryCap: Duration = .seconds(300)

    /// `failed`'s microphone stopped working (unplugged). A command it was recording ends now
    /// (push-to-talk's stop reports it, and listening resumes through the retry); otherwise wake
    /// stops listening and tries again later. A listener that is no longer the current one is
    /// left alone.
    private func microphoneFailed(_ failed: Listener, _ error: MicrophoneError) {
        guard state.withLock({ $0.listener === failed }) else { return }
        if let capture = failed.command {
            state.withLock { $0.ptt }?.endpoint(capture)
            return
        }
        updates.withLock { _ in
            let old = state.withLock { s -> Listener? in
                guard s.listener === failed else { return nil }
                defer { s.listener = nil }
                return s.listener
            }
            old?.stop()
        }
        retryLater("voice wake: the microphone stopped working (\(error.description))")
    }

    /// A phrase was heard and the command is being recorded; ends it on silence or at the cap.
    private func commandStarted(_ trigger: String, _ capture: PushToTalk.Capture) {
        log.info("wake phrase \"\(trigger)\" heard; recording the command")
        let done = Endpoint()
        state.withLock { $0.ptt }?.setEndpoint(capture) { done.fire() }
        let timer = DeadlineTimer.shared.schedule(at: .now + Self.commandCap) { done.fire() }
        commands.start { [self] in
            // Cancelled (the capability stops): the command ends now, not at the cap.
            await withTaskCancellationHandler { await done.wait() } onCancel: { done.fire() }
            DeadlineTimer.shared.cancel(timer)
            let ptt = state.withLock { $0.ptt }
            let result = await BlockingExecutor.run("wake-command") { (_: CancelFlag) -> (id: String, transcript: String)? in try? ptt?.stop() }
            updates.withLock { _ in
                let listener = state.withLock { s -> Listener? in defer { s.listener = nil }; return s.listener }
                listener?.stop()  // push-to-talk's stop closed this microphone already
            }
            if let result { await onCommand(trigger, result.transcript) }
            update()
        }
    }

    /// One open microphone: the keyword search until a hit, then the command into push-to-talk.
    final class Listener: Sendable {
        private let mic: MicrophoneCapture
        private struct Heard {
            var ring: [Int16] = []
            var recording: PushToTalk.Capture?
        }
        private let heard = Locked(Heard())
        /// The command being recorded after a hit, if any.
        var command: PushToTalk.Capture? { heard.withLock { $0.recording } }

        private let ptt: PushToTalk

        /// Opens the microphone and points the decoder at the phrases; `start` begins listening.
        init(device: String, phrases: [String], keywordFile: String, ptt: PushToTalk) throws(NodeError) {
            try ptt.beginSpotting(phrases: phrases, file: keywordFile)
            do { mic = try MicrophoneCapture(device: device, sampleRate: 16_000, channels: 1) }
            catch { throw NodeError.unavailable(error.description) }
            self.ptt = ptt
        }

        func start(onFailure: @escaping @Sendable (Listener, MicrophoneError) -> Void,
                   onHit: @escaping @Sendable (String, PushToTalk.Capture) -> Void) {
            mic.start(failed: { [self] error in onFailure(self, error) }) { [self] chunk in
                if let capture = heard.withLock({ $0.recording }) { ptt.feed(chunk, capture); return }
                let phrase = ptt.spot(chunk.samples)
                let preamble = heard.withLock { h -> [Int16] in
                    h.ring.append(contentsOf: chunk.samples)
                    if h.ring.count > VoiceWake.preambleSamples { h.ring.removeFirst(h.ring.count - VoiceWake.preambleSamples) }
                    return h.ring
                }
                guard let phrase else { return }
                guard let capture = try? ptt.adopt(mic: mic, preamble: preamble) else { return }
                heard.withLock { $0.recording = capture; $0.ring = [] }
                onHit(phrase, capture)
            }
        }

        /// Closes the microphone (waits for its thread). Safe to call twice.
        func stop() { _ = mic.stop() }
    }
}
