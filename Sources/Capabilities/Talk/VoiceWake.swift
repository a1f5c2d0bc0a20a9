import FoundationEssentials
import Glibc
import Kit
import Media
import Support

/// Voice wake: while enabled, someone is at the device, the gateway has sent its trigger phrases and
/// push-to-talk is not using the microphone, one microphone listens and a keyword search looks for
/// the phrases — with push-to-talk's own decoder, switched to its keyword search, so the model is in
/// memory once. On a hit the same microphone keeps recording the command into that recognizer (the
/// audio of the last few seconds first) until speech is followed by silence (or 10 s).
final class VoiceWake: @unchecked Sendable {
    /// What a hit leads to: the phrase heard and the command's transcript (owner hands it over).
    typealias CommandHandler = @Sendable (_ trigger: String, _ transcript: String) async -> Void

    static let commandCap: Duration = .seconds(10)
    /// Audio kept from before the hit, so the recognizer hears the phrase and what came with it.
    static let preambleSamples = 16_000 * 3

    private let lock = Lock()
    /// Held for a whole `update()`, so two updates (a presence change, the end of a command) cannot
    /// both decide while a listener is being opened.
    private let updateLock = Lock()
    private let log = Logger(component: "talk")
    private let settings: TalkSettings
    private let keywordFile: String
    private let onCommand: CommandHandler
    private var ptt: PushToTalk?
    private var phrases: [String] = []
    private var foreground = false
    private var pausedForPTT = false
    private var listener: Listener?
    /// After the microphone failed: the pending retry, and the delay before the next one.
    private var retryTimer: DeadlineTimer.Token?
    private var retryDelay: Duration?

    init(settings: TalkSettings, keywordFile: String, onCommand: @escaping CommandHandler) {
        self.settings = settings
        self.keywordFile = keywordFile
        self.onCommand = onCommand
    }

    var isListening: Bool { lock.withLock { listener != nil } }

    /// The daemon is up and the recognizer is loaded.
    func attach(_ ptt: PushToTalk) { lock.withLock { self.ptt = ptt }; update() }

    /// `voicewake.changed`: the gateway's trigger phrases.
    func setTriggers(_ triggers: [String]) {
        let split = WakePhrases.spottable(triggers, modelDir: settings.modelDir)
        if !split.unknown.isEmpty {
            log.warn("voice wake cannot listen for \(split.unknown.map { "\"\($0)\"" }.joined(separator: ", ")): not in the English pronunciation dictionary")
        }
        let changed = lock.withLock { () -> Bool in
            defer { phrases = split.usable }
            return phrases != split.usable
        }
        if changed { restart() }
    }

    func setForeground(_ value: Bool) { lock.withLock { foreground = value }; update() }

    /// Push-to-talk takes the microphone; wake gives it back first and listens again afterwards.
    func pause() {
        updateLock.withLock {
            let old = lock.withLock { () -> Listener? in pausedForPTT = true; defer { listener = nil }; return listener }
            close(old, why: "push-to-talk")
        }
    }

    func resume() { lock.withLock { pausedForPTT = false }; update() }

    func stop() {
        if let t = lock.withLock({ () -> DeadlineTimer.Token? in defer { retryTimer = nil }; return retryTimer }) { DeadlineTimer.shared.cancel(t) }
        updateLock.withLock {
            let old = lock.withLock { () -> Listener? in ptt = nil; defer { listener = nil }; return listener }
            close(old, why: "stopping")
        }
    }

    private func restart() {
        updateLock.withLock {
            let old = lock.withLock { () -> Listener? in defer { listener = nil }; return listener }
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
    func update() { updateLock.withLock { updateLocked() } }

    private func updateLocked() {
        let (want, current, wanted) = lock.withLock { () -> (Bool, PushToTalk?, [String]) in
            (self.ptt != nil && !self.phrases.isEmpty && foreground && !pausedForPTT && settings.voiceWake, self.ptt, self.phrases)
        }
        if !want {
            let old = lock.withLock { () -> Listener? in defer { listener = nil }; return listener }
            close(old, why: foreground ? "paused" : "nobody at the device")
            return
        }
        guard lock.withLock({ listener == nil }), let current, current.activeCaptureId == nil else { return }
        do throws(NodeError) {
            if let why = PrivateDirectory.create(PathName.directory(keywordFile)) { throw NodeError(.unavailable("talk"), why) }
            let l = try Listener(device: settings.captureDevice, phrases: wanted, keywordFile: keywordFile, ptt: current)
            lock.withLock { listener = l; retryDelay = nil }
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
        let delay = lock.withLock { () -> Duration? in
            let next = retryDelay.map { min($0 * 2, Self.retryCap) } ?? Self.retryAfterFailure
            defer { retryDelay = next }
            return retryTimer == nil ? next : nil
        }
        guard let delay else { return }  // one retry is pending already
        if delay == Self.retryAfterFailure { log.warn("\(why); trying again in \(delay)") } else { log.debug("\(why); trying again in \(delay)") }
        let token = DeadlineTimer.shared.schedule(at: .now + delay) { [weak self] in
            guard let wake = self else { return }
            wake.lock.withLock { wake.retryTimer = nil }
            BlockingExecutor.start("wake-retry") { wake.update() }
        }
        lock.withLock { retryTimer = token }
    }

    static let retryAfterFailure: Duration = .seconds(10)
    static let retryCap: Duration = .seconds(300)

    /// `failed`'s microphone stopped working (unplugged). A command it was recording ends now
    /// (push-to-talk's stop reports it, and listening resumes through the retry); otherwise wake
    /// stops listening and tries again later. A listener that is no longer the current one is
    /// left alone.
    private func microphoneFailed(_ failed: Listener, _ error: MicrophoneError) {
        guard lock.withLock({ listener === failed }) else { return }
        if let capture = failed.command {
            lock.withLock { ptt }?.endpoint(capture)
            return
        }
        updateLock.withLock {
            let old = lock.withLock { () -> Listener? in
                guard listener === failed else { return nil }
                defer { listener = nil }
                return listener
            }
            old?.stop()
        }
        retryLater("voice wake: the microphone stopped working (\(error.description))")
    }

    /// A phrase was heard and the command is being recorded; ends it on silence or at the cap.
    private func commandStarted(_ trigger: String, _ capture: PushToTalk.Capture) {
        log.info("wake phrase \"\(trigger)\" heard; recording the command")
        let done = Endpoint()
        lock.withLock { ptt }?.setEndpoint(capture) { done.fire() }
        let timer = DeadlineTimer.shared.schedule(at: .now + Self.commandCap) { done.fire() }
        Task { [self] in
            await done.wait()
            DeadlineTimer.shared.cancel(timer)
            let ptt = lock.withLock { self.ptt }
            let result = await BlockingExecutor.run("wake-command") { (_: CancelFlag) -> (id: String, transcript: String)? in try? ptt?.stop() }
            updateLock.withLock {
                let listener = lock.withLock { () -> Listener? in defer { self.listener = nil }; return self.listener }
                listener?.stop()  // push-to-talk's stop closed this microphone already
            }
            if let result { await onCommand(trigger, result.transcript) }
            update()
        }
    }

    /// One open microphone: the keyword search until a hit, then the command into push-to-talk.
    final class Listener: @unchecked Sendable {
        private let mic: MicrophoneCapture
        private let lock = Lock()
        private var ring: [Int16] = []
        private var recording: PushToTalk.Capture?
        /// The command being recorded after a hit, if any.
        var command: PushToTalk.Capture? { lock.withLock { recording } }

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
                if let capture = lock.withLock({ recording }) { ptt.feed(chunk, capture); return }
                let heard = ptt.spot(chunk.samples)
                let preamble = lock.withLock { () -> [Int16] in
                    ring.append(contentsOf: chunk.samples)
                    if ring.count > VoiceWake.preambleSamples { ring.removeFirst(ring.count - VoiceWake.preambleSamples) }
                    return ring
                }
                guard let heard else { return }
                guard let capture = try? ptt.adopt(mic: mic, preamble: preamble) else { return }
                lock.withLock { recording = capture; ring = [] }
                onHit(heard, capture)
            }
        }

        /// Closes the microphone (waits for its thread). Safe to call twice.
        func stop() { _ = mic.stop() }
    }
}
