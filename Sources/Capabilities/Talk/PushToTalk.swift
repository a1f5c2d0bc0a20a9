import Glibc
import Kit
import Media
import Support

/// One push-to-talk capture at a time: the microphone feeds the warm recognizer on its own thread,
/// and the capture ends by stop/cancel, or for `once` on speech followed by silence or at the cap.
/// Audio is never written anywhere: each chunk goes straight into the decoder, and the capture's
/// chunks stay in memory only until it ends (see `EarlyFinish`).
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
            /// Chunks recorded while the recognizer is busy on the worker (loading, finishing early,
            /// replaying); nil: it is free, chunks go straight in.
            var waiting: [AudioChunk]?
            /// Why the recognizer could not be loaded for this capture.
            var loadFailure: NodeError?
            /// A worker thread has the recognizer and decodes what waits (ends with `waiting` nil).
            var working = false
            /// The capture's audio so far, in order, for a replay (nil: past `EarlyFinish.keptFrames`).
            var kept: [AudioChunk]? = []
            var keptFrames = 0
            /// The transcript finished at the last pause; while set, the decoder's utterance is a
            /// fresh one that has heard only silence since.
            var early: String?
            /// How many early finishes and replays this capture made (logs and tests).
            var earlyFinishes = 0
            var replays = 0
            /// The end of the last chunk an early finish was made at: a replay passes that pause
            /// again and must not finish there again.
            var finishedAtNs: UInt64 = 0
            /// How much audio the utterance a finish at `endNs` decodes: from the first kept chunk
            /// (an early finish needs them kept), 0 when none are.
            func audioNs(until endNs: UInt64) -> UInt64 {
                guard let start = kept?.first(where: { $0.frames > 0 })?.timestampNs, endNs > start else { return 0 }
                return endNs - start
            }
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
    /// How long a finish took per second of utterance lately (EarlyFinish.Pace).
    private let pace = Locked(EarlyFinish.Pace())
    /// The recognizer is fed on the microphone thread and finished by the caller; one at a time.
    /// Taken after `core` when both are.
    private let decoder: Locked<Confined<any SpeechRecognizer>>
    private let device: String
    private let log = Logger(component: "talk")
    /// nil: the language model stays loaded.
    private let releaseAfter: Duration?

    init(recognizer: any SpeechRecognizer, device: String, releaseAfter: Duration? = nil) {
        decoder = Locked(confining: recognizer)
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
            try decoder.withConfined { (recognizer: inout any SpeechRecognizer) throws(NodeError) in
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
        decoder.withConfined { recognizer in samples.withUnsafeBufferPointer { recognizer.spot($0) } }
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
        if let p = preamble { capture.progress.withLock { Self.keep(p, &$0) } }
        let ready = decoder.withConfined { $0.isReady }
        if ready {
            try decoder.withConfined { (recognizer: inout any SpeechRecognizer) throws(NodeError) in
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
        capture.progress.withLock { $0.waiting = preamble.map { [$0] } ?? []; $0.working = true }
        BlockingExecutor.start("speech-model") { [self] in work(.load, capture) }
    }

    /// What the worker thread does with the recognizer before it decodes what waited.
    enum Job { case load, finishEarly(atNs: UInt64), replay }

    /// The worker: runs `job`, then decodes the chunks that waited meanwhile, in order, until none
    /// wait (the microphone thread then feeds the recognizer again). A chunk may call for another
    /// job (a pause, speech again), which runs here before the next chunk.
    private func work(_ job: Job, _ capture: Capture) {
        var next: Job? = job
        while true {
            if let job = next {
                next = nil
                if case .load = job, !load(capture) { return }
                if case .finishEarly(let at) = job { finishEarly(capture, at: at) }
                if case .replay = job { replay(capture) }
            }
            // `update`: the end of the work wakes `awaitWorker`.
            guard let batch = capture.progress.update({ p -> [AudioChunk]? in
                guard let w = p.waiting, !w.isEmpty else { p.waiting = nil; p.working = false; return nil }
                p.waiting = []
                return w
            }) else { return }
            for (i, chunk) in batch.enumerated() {
                guard let job = decode(chunk, capture, onWorker: true) else { continue }
                // The rest of the batch goes back in front of what arrived since.
                capture.progress.withLock { $0.waiting = Array(batch[(i + 1)...]) + ($0.waiting ?? []) }
                next = job
                break
            }
        }
    }

    /// Loads the language model for a capture that started without it; false when it cannot.
    private func load(_ capture: Capture) -> Bool {
        let started = ContinuousClock.now
        do throws(NodeError) {
            try decoder.withConfined { (recognizer: inout any SpeechRecognizer) throws(NodeError) in try recognizer.begin() }
            log.info("speech recognizer's language model loaded in \((ContinuousClock.now - started).milliseconds) ms (push-to-talk \(capture.id.prefix(8)))")
            return true
        } catch {
            capture.progress.update { $0.loadFailure = error; $0.waiting = nil; $0.working = false }
            log.warn("speech recognizer could not load: \(error.message)")
            endpoint(capture)
            return false
        }
    }

    /// Finishes the utterance at the speaker's pause and starts a fresh one for what follows.
    private func finishEarly(_ capture: Capture, at: UInt64) {
        let started = monotonicNowNs()
        let text = decoder.withConfined { recognizer -> String? in
            defer { try? recognizer.begin() }
            return try? recognizer.finish()
        }
        guard let text else { replay(capture); return }  // the utterance is lost: build it again
        let (audioNs, silenceNs) = capture.progress.withLock { p -> (UInt64, UInt64) in
            p.early = text; p.finishedAtNs = at; p.earlyFinishes += 1
            // Nothing was said yet after all: wait for speech (the empty result stays, so a
            // replay still rebuilds one utterance from everything kept).
            if text.isEmpty { p.heardSpeech = false }
            return (p.audioNs(until: at), at - min(at, p.lastSpeechNs))
        }
        let took = monotonicNowNs() - started
        pace.withLock { $0.learn(took: took, audioNs: audioNs) }
        log.debug("push-to-talk \(capture.id.prefix(8)): \(audioNs / 1_000_000) ms of audio finished early, \(silenceNs / 1_000_000) ms into a pause, in \(took / 1_000_000) ms")
    }

    /// Speech after an early finish: the recognizer starts again on everything heard so far.
    private func replay(_ capture: Capture) {
        let started = monotonicNowNs()
        let chunks = capture.progress.withLock { p -> [AudioChunk] in
            p.early = nil
            p.replays += 1
            defer { if p.keptFrames > EarlyFinish.keptFrames { p.kept = nil } }
            return p.kept ?? []
        }
        decoder.withConfined { recognizer in
            _ = try? recognizer.finish()
            guard (try? recognizer.begin()) != nil else { return }
            for chunk in chunks { chunk.samples.withUnsafeBufferPointer { _ = try? recognizer.feed($0) } }
        }
        log.debug("push-to-talk \(capture.id.prefix(8)): speech again after a pause; \(chunks.count) chunks replayed in \((monotonicNowNs() - started) / 1_000_000) ms")
    }

    /// Keeps `chunk` for a replay while the capture is short enough. Past that, what was kept
    /// goes unless an early finish still needs it for its replay (which then lets it go).
    private static func keep(_ chunk: AudioChunk, _ p: inout Capture.Progress) {
        guard p.kept != nil else { return }
        p.kept!.append(chunk)
        p.keptFrames += chunk.frames
        if p.keptFrames > EarlyFinish.keptFrames, p.early == nil { p.kept = nil }
    }

    func feed(_ chunk: AudioChunk, _ capture: Capture) {
        let queued = capture.progress.withLock { p -> Bool in
            guard p.waiting != nil else { return false }
            p.waiting!.append(chunk)
            return true
        }
        guard !queued, let job = decode(chunk, capture, onWorker: false) else { return }
        // The recognizer goes to the worker (the chunks after this one wait for it there): the
        // microphone thread must not stop reading for a decode's length.
        BlockingExecutor.start("speech-decode") { [self] in work(job, capture) }
    }

    /// Feeds one chunk and decides whether the capture ends; a job for the worker when the chunk
    /// calls for one (then `waiting` is set, so that later chunks wait for it).
    private func decode(_ chunk: AudioChunk, _ capture: Capture, onWorker: Bool) -> Job? {
        let (inSpeech, wordless) = decoder.withConfined { recognizer -> (Bool, Bool) in
            chunk.samples.withUnsafeBufferPointer { try? recognizer.feed($0) }
            return (recognizer.hearsSpeech, recognizer.speechEndedWithoutWords)
        }
        let endNs = chunk.timestampNs + UInt64(chunk.frames) * 1_000_000_000 / 16_000
        let pace = pace.withLock { $0 }
        let (fire, job) = capture.progress.withLock { p -> ((@Sendable () -> Void)?, Job?) in
            Self.keep(chunk, &p)
            // A stretch of "speech" with no word in it (a fresh decoder's noise estimate settling, a
            // cough before the first word) is not the speaker having spoken: no endpoint, no early
            // finish counts from it. Real recordings start with ~1 s of room noise; this took them
            // for speech that had ended and answered `empty` before the first word.
            // Only in the capture's first 1.5 s, where that settling happens: later a short word the
            // partial result has not caught yet must still end the capture on the pause after it.
            if wordless, !inSpeech, p.early == nil, p.heardSpeech, p.audioNs(until: endNs) < 1_500_000_000 { p.heardSpeech = false }
            var job: Job?
            if p.early != nil, inSpeech || p.keptFrames > EarlyFinish.keptFrames {
                // Speech again, or past what may be kept: back to one utterance, finished at the end.
                job = .replay
            } else if !inSpeech, p.early == nil, p.kept != nil, p.heardSpeech, endNs > p.finishedAtNs, endNs > p.lastSpeechNs,
                      endNs - p.lastSpeechNs >= pace.silenceBeforeFinish(audioNs: p.audioNs(until: endNs)),
                      p.lastSpeechNs > p.finishedAtNs {
                job = .finishEarly(atNs: endNs)
            }
            if job != nil, !onWorker { p.waiting = []; p.working = true }
            if inSpeech { p.heardSpeech = true; p.lastSpeechNs = max(p.lastSpeechNs, endNs) }
            else if p.heardSpeech, endNs > p.lastSpeechNs, endNs - p.lastSpeechNs >= Self.silenceAfterSpeech {
                let fire = p.onEndpoint
                p.onEndpoint = nil
                if fire == nil { p.endpointPending = true }
                return (fire, job)
            }
            return (nil, job)
        }
        fire?()
        return job
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

    /// Waits until the worker (loading, finishing early, replaying) has decoded what waited.
    private func awaitWorker(_ capture: Capture) throws(NodeError) {
        capture.progress.wait(until: { !$0.working })
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
            let released = decoder.withConfined { recognizer -> Bool in
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
        try awaitWorker(capture)
        let early = capture.progress.withLock { p -> String? in defer { p.kept = nil }; return p.early }
        let text = try decoder.withConfined { (recognizer: inout any SpeechRecognizer) throws(NodeError) -> String in
            let last = try recognizer.finish()  // after an early finish: silence only, nothing to decode
            // Neither part hides the other: words the utterance after an early finish heard (a
            // stretch the detector never called speech, so no replay) are kept after it.
            return [early ?? "", last].filter { !$0.isEmpty }.joined(separator: " ")
        }
        if let failure {
            log.warn("push-to-talk \(capture.id.prefix(8)): the microphone stopped working: \(failure.description)")
            throw NodeError.unavailable("the microphone stopped working during the capture (\(failure.description)); " +
                                        "check that it is still connected (arecord -L)")
        }
        log.debug("push-to-talk \(capture.id.prefix(8)) heard: \(text)")
        return (capture.id, text)
    }

    /// Recognises recorded speech (stt.transcribe): 16 kHz mono samples through the same decoder,
    /// while no capture runs (PTT_BUSY while one does, and a capture waits for this one). Fed in
    /// tenths of a second, so `cancel` ends it between two.
    func transcribe(_ samples: [Int16], cancel: CancelFlag) throws(NodeError) -> String {
        let id = "transcribe-" + SecureRandom.uuid()
        try core.withLock { (core: inout Core) throws(NodeError) in
            guard case .idle = core.state else { throw NodeError(TalkError.pttBusy, "push-to-talk is in use; try again when it ends") }
            if let t = core.releaseTimer { DeadlineTimer.shared.cancel(t); core.releaseTimer = nil }
            core.state = .finishing(id)
        }
        defer { core.withLock { $0.state = .idle; scheduleRelease(&$0) } }
        return try decoder.withConfined { (recognizer: inout any SpeechRecognizer) throws(NodeError) -> String in
            try recognizer.begin()
            var failure: NodeError?
            samples.withUnsafeBufferPointer { all in
                var at = 0
                while at < all.count, failure == nil {
                    if cancel.isCancelled { failure = NodeError(.cancelled, "transcription cancelled"); break }
                    let end = min(all.count, at + 1_600)
                    do throws(NodeError) { try recognizer.feed(UnsafeBufferPointer(rebasing: all[at..<end])) } catch { failure = error }
                    at = end
                }
            }
            let text = try recognizer.finish()
            if let failure { throw failure }
            return text
        }
    }

    /// Drops the capture (nothing is recognised or sent); the id, or nil when none was active.
    func cancel() -> String? {
        guard let capture = takeCapture() else { return nil }
        defer { core.withLock { $0.state = .idle; scheduleRelease(&$0) } }
        _ = capture.mic.stop()
        try? awaitWorker(capture)
        capture.progress.withLock { $0.kept = nil }
        _ = decoder.withConfined { try? $0.finish() }
        log.info("microphone closed (push-to-talk \(capture.id.prefix(8)) cancelled)")
        return capture.id
    }
}
