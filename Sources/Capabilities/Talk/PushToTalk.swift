import Glibc
import Kit
import Media
import Support

/// One push-to-talk capture at a time: the microphone feeds the warm recognizer on its own thread,
/// and the capture ends by stop/cancel, or for `once` on speech followed by silence or at the cap.
/// Audio is never kept: each chunk goes straight into the decoder.
///
/// The recognizer's language model is given back after `releaseAfter` without a turn and loaded
/// again by the next capture while it records: until it is ready, the chunks wait in memory and
/// are decoded in order once it is (the capture's own audio, never written anywhere).
final class PushToTalk: Sendable {
    /// Speech, then this much silence after the decoder's end of speech, ends a `once` capture:
    /// with the decoder's 0.25 s that is about the 0.7 s the apps use.
    static let silenceAfterSpeech: UInt64 = 450_000_000
    /// `once` always answers inside the callers' default 15 s invoke timeout.
    static let onceCap: Duration = .seconds(12)

    enum State { case idle, capturing(Capture), finishing(String) }

    final class Capture: Sendable {
        let id: String
        let mic: MicrophoneCapture
        struct Progress {
            var heardSpeech = false
            var lastSpeechNs: UInt64 = 0
            /// Called once when `once` should end (speech then silence, or the microphone failed).
            var onEndpoint: (@Sendable () -> Void)?
            /// The capture should end but had no handler yet (set by `setEndpoint`, which fires at once).
            var endpointPending = false
            /// Chunks recorded while the recognizer loads (nil: it is ready, chunks go straight in).
            var waiting: [AudioChunk]?
            /// Why the recognizer could not be loaded for this capture.
            var loadFailure: NodeError?
            /// The recognizer is loading for this capture; `loaded` once it has fed everything that
            /// waited (or failed).
            var isLoading = false
            var loaded = false
        }
        /// Taken after the push-to-talk's own state when both are (never the other way round).
        let progress = Locked(Progress())
        init(id: String, mic: MicrophoneCapture) { self.id = id; self.mic = mic }
    }

    private struct Core {
        var state: State = .idle
        /// The phrases the decoder's wake search was last given.
        var wakePhrases: [String] = []
        var releaseTimer: DeadlineTimer.Token?
    }
    private let core = Locked(Core())
    /// The recognizer is fed on the microphone thread and finished by the caller; one at a time.
    /// Taken after `core` when both are.
    private let decoder: Locked<any SpeechRecognizer>
    private let device: String
    private let log = Logger(component: "talk")
    /// nil: the language model stays loaded.
    private let releaseAfter: Duration?

    init(recognizer: any SpeechRecognizer, device: String, releaseAfter: Duration? = nil) {
        decoder = Locked(recognizer)
        self.device = device
        self.releaseAfter = releaseAfter
        core.withLock { scheduleRelease(&$0) }
    }

    var activeCaptureId: String? {
        core.withLock { c in
            switch c.state {
            case .capturing(let c): return c.id
            case .finishing(let id): return id
            case .idle: return nil
            }
        }
    }

    /// Starts capturing, or returns the active capture's id. PTT_BUSY while a turn is finishing.
    func start(onEndpoint: (@Sendable () -> Void)? = nil) throws(NodeError) -> (id: String, new: Bool) {
        try core.withLock { (core: inout Core) throws(NodeError) -> (String, Bool) in
            switch core.state {
            case .capturing(let c): return (c.id, false)
            case .finishing: throw NodeError(TalkError.pttBusy, "the previous push-to-talk turn is still finishing; try again in a moment")
            case .idle: break
            }
            let mic: MicrophoneCapture
            do throws(MicrophoneError) { mic = try MicrophoneCapture(device: device, sampleRate: 16_000, channels: 1) } catch {
                if error.kind == .busy { throw NodeError(TalkError.micBusy, "\(error.description); another program is using the microphone") }
                throw NodeError.unavailable("\(error.description); set capabilities.talk.captureDevice to a capture device (arecord -L)")
            }
            let capture = Capture(id: SecureRandom.uuid(), mic: mic)
            capture.progress.withLock { $0.onEndpoint = onEndpoint }
            try beginOrLoad(capture, preamble: nil, &core)
            core.state = .capturing(capture)
            mic.start(failed: { [weak self, capture] _ in self?.endpoint(capture) }) { [weak self, capture] chunk in self?.feed(chunk, capture) }
            log.info("microphone open (\(device), \(mic.sampleRate) Hz) for push-to-talk \(capture.id.prefix(8))")
            return (capture.id, true)
        }
    }

    /// Points the recognizer at wake-phrase spotting (voice wake listening): one decoder, one model
    /// in memory for both. PTT_BUSY unless idle.
    func beginSpotting(phrases: [String], file: String) throws(NodeError) {
        try core.withLock { (core: inout Core) throws(NodeError) in
            guard case .idle = core.state else { throw NodeError(TalkError.pttBusy, "push-to-talk is in use") }
            try decoder.withLock { (recognizer: inout any SpeechRecognizer) throws(NodeError) in
                if phrases != core.wakePhrases {
                    try recognizer.setWakePhrases(phrases, file: file)
                    core.wakePhrases = phrases
                }
                try recognizer.beginSpotting()
            }
        }
    }

    /// Feeds wake listening's audio; the phrase heard, if one was.
    func spot(_ samples: [Int16]) -> String? {
        decoder.withLock { recognizer in samples.withUnsafeBufferPointer { recognizer.spot($0) } }
    }

    /// Turns an open microphone (voice wake's, which heard its phrase) into the active capture: the
    /// recognizer starts with `preamble` (the audio just before and including the phrase), and the
    /// owner forwards every further chunk to `feed`. PTT_BUSY unless idle.
    func adopt(mic: MicrophoneCapture, preamble: [Int16]) throws(NodeError) -> Capture {
        try core.withLock { (core: inout Core) throws(NodeError) -> Capture in
            guard case .idle = core.state else { throw NodeError(TalkError.pttBusy, "push-to-talk is in use") }
            let capture = Capture(id: SecureRandom.uuid(), mic: mic)
            // The preamble ends now: the wake phrase counts as speech up to its end.
            let now = monotonicNowNs()
            capture.progress.withLock { $0.heardSpeech = true; $0.lastSpeechNs = now }
            try beginOrLoad(capture, preamble: AudioChunk(samples: preamble, frames: preamble.count, channels: 1,
                                                          timestampNs: now - min(now, UInt64(preamble.count) * 62_500)), &core)
            core.state = .capturing(capture)
            return capture
        }
    }

    /// Starts recognition for `capture` now when the recognizer is ready; otherwise loads it on its
    /// own thread while the microphone records (`feed` keeps the chunks until then). Called with
    /// `core` held.
    private func beginOrLoad(_ capture: Capture, preamble: AudioChunk?, _ core: inout Core) throws(NodeError) {
        if let t = core.releaseTimer { DeadlineTimer.shared.cancel(t); core.releaseTimer = nil }
        let ready = decoder.withLock { $0.isReady }
        if ready {
            try decoder.withLock { (recognizer: inout any SpeechRecognizer) throws(NodeError) in
                try recognizer.begin()
                // The error leaves the buffer closure as a value: Swift 6.0 (Debian 13's swiftlang)
                // does not carry a typed throw through withUnsafeBufferPointer.
                if let p = preamble {
                    var failure: NodeError?
                    p.samples.withUnsafeBufferPointer { b in
                        do throws(NodeError) { try recognizer.feed(b) } catch { failure = error }
                    }
                    if let failure { throw failure }
                }
            }
            return
        }
        capture.progress.withLock { $0.waiting = preamble.map { [$0] } ?? []; $0.isLoading = true }
        BlockingExecutor.start("speech-model") { [self] in
            let started = ContinuousClock.now
            do throws(NodeError) {
                try decoder.withLock { (recognizer: inout any SpeechRecognizer) throws(NodeError) in try recognizer.begin() }
                log.info("speech recognizer's language model loaded in \((ContinuousClock.now - started).milliseconds) ms (push-to-talk \(capture.id.prefix(8)))")
            } catch {
                capture.progress.withLock { $0.loadFailure = error; $0.waiting = nil }
                log.warn("speech recognizer could not load: \(error.message)")
                endpoint(capture)
                capture.progress.update { $0.loaded = true }
                return
            }
            // Decode what was recorded meanwhile, in order, until nothing waits.
            while let batch = capture.progress.withLock({ p -> [AudioChunk]? in
                guard let w = p.waiting, !w.isEmpty else { p.waiting = nil; return nil }
                p.waiting = []
                return w
            }) {
                for chunk in batch { decode(chunk, capture) }
            }
            capture.progress.update { $0.loaded = true }
        }
    }

    func feed(_ chunk: AudioChunk, _ capture: Capture) {
        let queued = capture.progress.withLock { p -> Bool in
            guard p.waiting != nil else { return false }
            p.waiting!.append(chunk)
            return true
        }
        if !queued { decode(chunk, capture) }
    }

    private func decode(_ chunk: AudioChunk, _ capture: Capture) {
        let inSpeech = decoder.withLock { recognizer -> Bool in
            chunk.samples.withUnsafeBufferPointer { try? recognizer.feed($0) }
            return recognizer.hearsSpeech
        }
        let endNs = chunk.timestampNs + UInt64(chunk.frames) * 1_000_000_000 / 16_000
        let fire = capture.progress.withLock { p -> (@Sendable () -> Void)? in
            if inSpeech { p.heardSpeech = true; p.lastSpeechNs = max(p.lastSpeechNs, endNs) }
            else if p.heardSpeech, endNs > p.lastSpeechNs, endNs - p.lastSpeechNs >= Self.silenceAfterSpeech {
                let fire = p.onEndpoint
                p.onEndpoint = nil
                if fire == nil { p.endpointPending = true }
                return fire
            }
            return nil
        }
        fire?()
    }

    /// Ends a `once` capture now (its microphone failed: there is nothing more to wait for).
    func endpoint(_ capture: Capture) {
        let fire = capture.progress.withLock { p -> (@Sendable () -> Void)? in
            defer { p.onEndpoint = nil }
            if p.onEndpoint == nil { p.endpointPending = true }
            return p.onEndpoint
        }
        fire?()
    }

    /// Sets what ends `capture` (voice wake's command, adopted before its handler existed); fires
    /// at once when the capture already had to end.
    func setEndpoint(_ capture: Capture, _ handler: @escaping @Sendable () -> Void) {
        let now = capture.progress.withLock { p -> Bool in
            if p.endpointPending { return true }
            p.onEndpoint = handler
            return false
        }
        if now { handler() }
    }

    /// Waits until `capture`'s recognizer has loaded and decoded what waited (if it was loading).
    private func awaitLoaded(_ capture: Capture) throws(NodeError) {
        guard capture.progress.withLock({ $0.isLoading }) else { return }
        capture.progress.wait(until: { $0.loaded })
        if let e = capture.progress.withLock({ $0.loadFailure }) { throw e }
    }

    /// After a turn: give the language model back once `releaseAfter` passes without another.
    /// Called with `core` held.
    private func scheduleRelease(_ core: inout Core) {
        guard let after = releaseAfter else { return }
        if let t = core.releaseTimer { DeadlineTimer.shared.cancel(t) }
        core.releaseTimer = DeadlineTimer.shared.schedule(at: .now + after) { [weak self] in
            guard let ptt = self else { return }
            BlockingExecutor.start("speech-release") { ptt.releaseIfIdle() }
        }
    }

    private func releaseIfIdle() {
        core.withLock { core in
            core.releaseTimer = nil
            guard case .idle = core.state else { return }
            let released = decoder.withLock { recognizer -> Bool in
                guard recognizer.isReady else { return false }
                recognizer.release()
                return !recognizer.isReady
            }
            if released { log.info("speech recognizer's language model released after \(releaseAfter ?? .zero) without push-to-talk (loaded again by the next capture)") }
        }
    }

    /// The active capture, now finishing (nil when none was active).
    private func takeCapture() -> Capture? {
        core.withLock { core -> Capture? in
            guard case .capturing(let c) = core.state else { return nil }
            core.state = .finishing(c.id)
            return c
        }
    }

    /// Ends the capture and returns (captureId, transcript), or nil when none was active.
    /// UNAVAILABLE when the microphone stopped working during the capture (unplugged): what it
    /// heard until then may be cut mid-word, so nothing is handed over.
    func stop() throws(NodeError) -> (id: String, transcript: String)? {
        guard let capture = takeCapture() else { return nil }
        defer { core.withLock { $0.state = .idle; scheduleRelease(&$0) } }
        let failure = capture.mic.stop()
        log.info("microphone closed (push-to-talk \(capture.id.prefix(8)))")
        try awaitLoaded(capture)
        let text = try decoder.withLock { (recognizer: inout any SpeechRecognizer) throws(NodeError) -> String in try recognizer.finish() }
        if let failure {
            log.warn("push-to-talk \(capture.id.prefix(8)): the microphone stopped working: \(failure.description)")
            throw NodeError.unavailable("the microphone stopped working during the capture (\(failure.description)); " +
                                        "check that it is still connected (arecord -L)")
        }
        log.debug("push-to-talk \(capture.id.prefix(8)) heard: \(text)")
        return (capture.id, text)
    }

    /// Drops the capture (nothing is recognised or sent); the id, or nil when none was active.
    func cancel() -> String? {
        guard let capture = takeCapture() else { return nil }
        defer { core.withLock { $0.state = .idle; scheduleRelease(&$0) } }
        _ = capture.mic.stop()
        try? awaitLoaded(capture)
        _ = decoder.withLock { try? $0.finish() }
        log.info("microphone closed (push-to-talk \(capture.id.prefix(8)) cancelled)")
        return capture.id
    }
}
