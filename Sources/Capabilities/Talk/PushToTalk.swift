import Dispatch
import FoundationEssentials
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
final class PushToTalk: @unchecked Sendable {
    /// Speech, then this much silence after the decoder's end of speech, ends a `once` capture:
    /// with the decoder's 0.25 s that is about the 0.7 s the apps use.
    static let silenceAfterSpeech: UInt64 = 450_000_000
    /// `once` always answers inside the callers' default 15 s invoke timeout.
    static let onceCap: Duration = .seconds(12)

    enum State { case idle, capturing(Capture), finishing(String) }

    final class Capture: @unchecked Sendable {
        let id: String
        let mic: MicrophoneCapture
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
        /// Signalled when the loading thread has fed everything that waited (or failed).
        let loaded = DispatchSemaphore(value: 0)
        var isLoading = false
        init(id: String, mic: MicrophoneCapture) { self.id = id; self.mic = mic }
    }

    private let lock = Lock()
    private var state: State = .idle
    private let recognizer: any SpeechRecognizer
    /// The recognizer is fed on the microphone thread and finished by the caller; one at a time.
    private let decoderLock = Lock()
    private let device: String
    private let log = Logger(component: "talk")
    /// nil: the language model stays loaded.
    private let releaseAfter: Duration?
    private var releaseTimer: DeadlineTimer.Token?

    init(recognizer: any SpeechRecognizer, device: String, releaseAfter: Duration? = nil) {
        self.recognizer = recognizer
        self.device = device
        self.releaseAfter = releaseAfter
        lock.withLock { scheduleRelease() }
    }

    var activeCaptureId: String? {
        lock.withLock {
            switch state {
            case .capturing(let c): return c.id
            case .finishing(let id): return id
            case .idle: return nil
            }
        }
    }

    /// Starts capturing, or returns the active capture's id. PTT_BUSY while a turn is finishing.
    func start(onEndpoint: (@Sendable () -> Void)? = nil) throws(NodeError) -> (id: String, new: Bool) {
        try lock.withLock { () throws(NodeError) -> (String, Bool) in
            switch state {
            case .capturing(let c): return (c.id, false)
            case .finishing: throw NodeError(TalkError.pttBusy, "the previous push-to-talk turn is still finishing; try again in a moment")
            case .idle: break
            }
            let mic: MicrophoneCapture
            do throws(MicrophoneError) { mic = try MicrophoneCapture(device: device, sampleRate: 16_000, channels: 1) } catch {
                if error.kind == .busy { throw NodeError(TalkError.micBusy, "\(error.description); another program is using the microphone") }
                throw NodeError.unavailable("\(error.description); set capabilities.talk.captureDevice to a capture device (arecord -L)")
            }
            let capture = Capture(id: UUID().uuidString.lowercased(), mic: mic)
            capture.onEndpoint = onEndpoint
            try beginOrLoad(capture, preamble: nil)
            state = .capturing(capture)
            mic.start(failed: { [weak self, capture] _ in self?.endpoint(capture) }) { [weak self, capture] chunk in self?.feed(chunk, capture) }
            log.info("microphone open (\(device), \(mic.sampleRate) Hz) for push-to-talk \(capture.id.prefix(8))")
            return (capture.id, true)
        }
    }

    /// The phrases the decoder's wake search was last given.
    private var wakePhrases: [String] = []

    /// Points the recognizer at wake-phrase spotting (voice wake listening): one decoder, one model
    /// in memory for both. PTT_BUSY unless idle.
    func beginSpotting(phrases: [String], file: String) throws(NodeError) {
        try lock.withLock { () throws(NodeError) in
            guard case .idle = state else { throw NodeError(TalkError.pttBusy, "push-to-talk is in use") }
            try decoderLock.withLock { () throws(NodeError) in
                if phrases != wakePhrases {
                    try recognizer.setWakePhrases(phrases, file: file)
                    wakePhrases = phrases
                }
                try recognizer.beginSpotting()
            }
        }
    }

    /// Feeds wake listening's audio; the phrase heard, if one was.
    func spot(_ samples: [Int16]) -> String? {
        decoderLock.withLock { samples.withUnsafeBufferPointer { recognizer.spot($0) } }
    }

    /// Turns an open microphone (voice wake's, which heard its phrase) into the active capture: the
    /// recognizer starts with `preamble` (the audio just before and including the phrase), and the
    /// owner forwards every further chunk to `feed`. PTT_BUSY unless idle.
    func adopt(mic: MicrophoneCapture, preamble: [Int16]) throws(NodeError) -> Capture {
        try lock.withLock { () throws(NodeError) -> Capture in
            guard case .idle = state else { throw NodeError(TalkError.pttBusy, "push-to-talk is in use") }
            let capture = Capture(id: UUID().uuidString.lowercased(), mic: mic)
            // The preamble ends now: the wake phrase counts as speech up to its end.
            let now = monotonicNowNs()
            capture.heardSpeech = true
            capture.lastSpeechNs = now
            try beginOrLoad(capture, preamble: AudioChunk(samples: preamble, frames: preamble.count, channels: 1,
                                                          timestampNs: now - min(now, UInt64(preamble.count) * 62_500)))
            state = .capturing(capture)
            return capture
        }
    }

    /// Starts recognition for `capture` now when the recognizer is ready; otherwise loads it on its
    /// own thread while the microphone records (`feed` keeps the chunks until then). Called with
    /// `lock` held.
    private func beginOrLoad(_ capture: Capture, preamble: AudioChunk?) throws(NodeError) {
        if let t = releaseTimer { DeadlineTimer.shared.cancel(t); releaseTimer = nil }
        let ready = decoderLock.withLock { recognizer.isReady }
        if ready {
            try decoderLock.withLock { () throws(NodeError) in
                try recognizer.begin()
                if let p = preamble { try p.samples.withUnsafeBufferPointer { (b) throws(NodeError) in try recognizer.feed(b) } }
            }
            return
        }
        capture.waiting = preamble.map { [$0] } ?? []
        capture.isLoading = true
        BlockingExecutor.start("speech-model") { [self] in
            let started = ContinuousClock.now
            do throws(NodeError) {
                try decoderLock.withLock { () throws(NodeError) in try recognizer.begin() }
                log.info("speech recognizer's language model loaded in \((ContinuousClock.now - started).milliseconds) ms (push-to-talk \(capture.id.prefix(8)))")
            } catch {
                lock.withLock { capture.loadFailure = error; capture.waiting = nil }
                log.warn("speech recognizer could not load: \(error.message)")
                endpoint(capture)
                capture.loaded.signal()
                return
            }
            // Decode what was recorded meanwhile, in order, until nothing waits.
            while let batch = lock.withLock({ () -> [AudioChunk]? in
                guard let w = capture.waiting, !w.isEmpty else { capture.waiting = nil; return nil }
                capture.waiting = []
                return w
            }) {
                for chunk in batch { decode(chunk, capture) }
            }
            capture.loaded.signal()
        }
    }

    func feed(_ chunk: AudioChunk, _ capture: Capture) {
        let queued = lock.withLock { () -> Bool in
            guard capture.waiting != nil else { return false }
            capture.waiting!.append(chunk)
            return true
        }
        if !queued { decode(chunk, capture) }
    }

    private func decode(_ chunk: AudioChunk, _ capture: Capture) {
        let inSpeech = decoderLock.withLock { () -> Bool in
            chunk.samples.withUnsafeBufferPointer { try? recognizer.feed($0) }
            return recognizer.hearsSpeech
        }
        let endNs = chunk.timestampNs + UInt64(chunk.frames) * 1_000_000_000 / 16_000
        var fire: (@Sendable () -> Void)?
        lock.withLock {
            if inSpeech { capture.heardSpeech = true; capture.lastSpeechNs = max(capture.lastSpeechNs, endNs) }
            else if capture.heardSpeech, endNs > capture.lastSpeechNs, endNs - capture.lastSpeechNs >= Self.silenceAfterSpeech {
                fire = capture.onEndpoint
                capture.onEndpoint = nil
                if fire == nil { capture.endpointPending = true }
            }
        }
        fire?()
    }

    /// Ends a `once` capture now (its microphone failed: there is nothing more to wait for).
    func endpoint(_ capture: Capture) {
        let fire = lock.withLock { () -> (@Sendable () -> Void)? in
            defer { capture.onEndpoint = nil }
            if capture.onEndpoint == nil { capture.endpointPending = true }
            return capture.onEndpoint
        }
        fire?()
    }

    /// Sets what ends `capture` (voice wake's command, adopted before its handler existed); fires
    /// at once when the capture already had to end.
    func setEndpoint(_ capture: Capture, _ handler: @escaping @Sendable () -> Void) {
        let now = lock.withLock { () -> Bool in
            if capture.endpointPending { return true }
            capture.onEndpoint = handler
            return false
        }
        if now { handler() }
    }

    /// Waits until `capture`'s recognizer has loaded and decoded what waited (if it was loading).
    private func awaitLoaded(_ capture: Capture) throws(NodeError) {
        guard lock.withLock({ capture.isLoading }) else { return }
        capture.loaded.wait()
        capture.loaded.signal()
        if let e = lock.withLock({ capture.loadFailure }) { throw e }
    }

    /// After a turn: give the language model back once `releaseAfter` passes without another.
    /// Called with `lock` held.
    private func scheduleRelease() {
        guard let after = releaseAfter else { return }
        if let t = releaseTimer { DeadlineTimer.shared.cancel(t) }
        releaseTimer = DeadlineTimer.shared.schedule(at: .now + after) { [weak self] in
            guard let ptt = self else { return }
            BlockingExecutor.start("speech-release") { ptt.releaseIfIdle() }
        }
    }

    private func releaseIfIdle() {
        lock.withLock {
            releaseTimer = nil
            guard case .idle = state else { return }
            let released = decoderLock.withLock { () -> Bool in
                guard recognizer.isReady else { return false }
                recognizer.release()
                return !recognizer.isReady
            }
            if released { log.info("speech recognizer's language model released after \(releaseAfter ?? .zero) without push-to-talk (loaded again by the next capture)") }
        }
    }

    /// The active capture, now finishing (nil when none was active).
    private func takeCapture() -> Capture? {
        lock.withLock { () -> Capture? in
            guard case .capturing(let c) = state else { return nil }
            state = .finishing(c.id)
            return c
        }
    }

    /// Ends the capture and returns (captureId, transcript), or nil when none was active.
    /// UNAVAILABLE when the microphone stopped working during the capture (unplugged): what it
    /// heard until then may be cut mid-word, so nothing is handed over.
    func stop() throws(NodeError) -> (id: String, transcript: String)? {
        guard let capture = takeCapture() else { return nil }
        defer { lock.withLock { state = .idle; scheduleRelease() } }
        let failure = capture.mic.stop()
        log.info("microphone closed (push-to-talk \(capture.id.prefix(8)))")
        try awaitLoaded(capture)
        let text = try decoderLock.withLock { () throws(NodeError) -> String in try recognizer.finish() }
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
        defer { lock.withLock { state = .idle; scheduleRelease() } }
        _ = capture.mic.stop()
        try? awaitLoaded(capture)
        _ = decoderLock.withLock { try? recognizer.finish() }
        log.info("microphone closed (push-to-talk \(capture.id.prefix(8)) cancelled)")
        return capture.id
    }
}
