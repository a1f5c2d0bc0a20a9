import Glibc
import Kit
import Media
import Support

/// The microphone side of a realtime conversation: captures at the device's own rate (48 kHz
/// asked, what most USB and HDA hardware runs at), resamples to the relay's 24 kHz, and hands
/// 40 ms frames with their capture time (integer milliseconds of the monotonic clock) to
/// `send`, one request at a time — frames that queue meanwhile go up together in the next one,
/// so a slow link delays audio but never reorders it. What is dropped, and why:
/// - half duplex: nothing goes up while the reply is audible (the speaker would be heard as the
///   person, and the provider would interrupt itself);
/// - after a barge-in, nothing until the gateway confirms the old turn is cleared (its audio
///   would otherwise be answered as part of the old turn); what the person said meanwhile is
///   held from 300 ms before the barge-in and sent once the fence lifts;
/// - more than 2 s waiting (a stalled link): the oldest.
final class RelayUplink: Sendable {
    static let frameMs = 40
    static let captureRate = 48_000
    private static let frameSamples = RelayPlayback.wireRate * frameMs / 1000
    private static let maxQueuedFrames = 2000 / frameMs
    private static let preRollFrames = 300 / frameMs

    struct Frame: Sendable { let samples: [Int16]; let timestampMs: Int; let capturedNs: UInt64 }

    private struct State {
        var resampler = AudioResampler(from: RelayUplink.captureRate, to: RelayPlayback.wireRate)
        var partial: [Int16] = []
        var partialStartNs: UInt64 = 0
        var queued: [Frame] = []
        /// Frames kept while the uplink is closed, for the start of a barge-in.
        var recent: [Frame] = []
        var fenced = false
        var held: [Frame] = []
        var loudChunks = 0
        var lastBargeInNs: UInt64 = 0
        var lastSpeechNs: UInt64 = monotonicNowNs()
        var dropped = 0
        var finished = false
    }
    private let state = Locked(State())
    private let settings: ConversationSettings
    private let playback: RelayPlayback
    private let onBargeIn: @Sendable () -> Void
    private let signal: AsyncStream<Void>.Continuation
    private let signals: AsyncStream<Void>
    private let mic: MicrophoneCapture
    /// Full duplex: the reply's echo is removed before anything else sees the microphone.
    private let echoCanceller: EchoCanceller?
    private let log: Logger

    init(device: String, settings: ConversationSettings, playback: RelayPlayback, echoCanceller: EchoCanceller? = nil, log: Logger,
         onBargeIn: @escaping @Sendable () -> Void) throws(MicrophoneError) {
        mic = try MicrophoneCapture(device: device, sampleRate: Self.captureRate, channels: 1)
        self.settings = settings; self.playback = playback; self.log = log; self.onBargeIn = onBargeIn
        // The canceller works at 48 kHz: a device that cannot give it is used without.
        self.echoCanceller = mic.sampleRate == EchoCanceller.rate ? echoCanceller : nil
        if echoCanceller != nil, mic.sampleRate != EchoCanceller.rate {
            log.warn("\(device) captures at \(mic.sampleRate) Hz, not 48 kHz: no echo cancellation (use a plug PCM, or duplex half)")
        }
        (signals, signal) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        if mic.sampleRate != Self.captureRate {
            state.withLock { $0.resampler = AudioResampler(from: mic.sampleRate, to: RelayPlayback.wireRate) }
        }
        log.info("microphone open (\(device), \(mic.sampleRate) Hz, resampled to 24 kHz) for the conversation")
    }

    /// When someone last spoke at the microphone (speech-level audio).
    var lastSpeechNs: UInt64 { state.withLock { $0.lastSpeechNs } }

    /// Starts capturing; `failed` when the device goes away.
    func start(failed: @escaping @Sendable (MicrophoneError) -> Void) {
        mic.start(failed: failed) { [self] chunk in take(chunk) }
    }

    /// Sends frames until `stop`; `send` returns false when the session is gone.
    func run(_ send: @Sendable (Frame) async -> Bool) async {
        for await _ in signals {
            while let frame = nextBatch() {
                if !(await send(frame)) { return }
            }
            if state.withLock({ $0.finished }) { return }
        }
    }

    /// Lifts the barge-in fence: what was said since goes up now.
    func liftFence() {
        let lifted = state.withLock { s -> Bool in
            guard s.fenced else { return false }
            s.fenced = false
            s.queued += s.held
            s.held = []
            return true
        }
        if lifted { signal.yield() }
    }

    var isFenced: Bool { state.withLock { $0.fenced } }

    func stop() {
        mic.stop()
        state.withLock { $0.finished = true }
        signal.yield()
        signal.finish()
    }

    /// All queued frames as one (the timestamp of the first), or nil.
    private func nextBatch() -> Frame? {
        state.withLock { s -> Frame? in
            guard let first = s.queued.first else { return nil }
            let all = s.queued
            s.queued = []
            return all.count == 1 ? first : Frame(samples: all.flatMap(\.samples), timestampMs: first.timestampMs, capturedNs: first.capturedNs)
        }
    }

    /// On the capture thread: mono, 24 kHz, cut into frames, each routed as the state says.
    private func take(_ chunk: AudioChunk) {
        var mono = chunk.channels == 1 ? chunk.samples : stride(from: 0, to: chunk.samples.count, by: chunk.channels).map { i in
            Int16(clamping: (Int(chunk.samples[i]) + Int(chunk.samples[i + 1])) / 2)
        }
        // The speaker's buffer (120 ms) and the capture chunk's (20 ms): where the echo lands, roughly.
        if let aec = echoCanceller { mono = aec.capture(mono, delayMs: 140) }
        let level = Self.rms(mono)
        let now = monotonicNowNs()
        var bargeIn = false, wake = false
        state.withLock { s in
            if level >= 0.02 { s.lastSpeechNs = now }
            // Barge-in: two loud chunks in a row (40 ms) over a reply heard for 250 ms, at most
            // once per 900 ms — the iOS client's rule, which keeps a click from stopping a reply.
            if settings.bargeIn, !s.fenced, let heardFor = playback.playingFor, heardFor >= .milliseconds(250),
               now - s.lastBargeInNs > 900_000_000 {
                s.loudChunks = level >= settings.bargeInLevel ? s.loudChunks + 1 : 0
                if s.loudChunks >= 2 {
                    s.loudChunks = 0
                    s.lastBargeInNs = now
                    s.fenced = true
                    s.held = Array(s.recent.suffix(Self.preRollFrames))
                    bargeIn = true
                }
            } else {
                s.loudChunks = 0
            }
            if s.partial.isEmpty { s.partialStartNs = chunk.timestampNs }
            s.partial += s.resampler.process(mono)
            while s.partial.count >= Self.frameSamples {
                let samples = Array(s.partial.prefix(Self.frameSamples))
                s.partial.removeFirst(Self.frameSamples)
                let frame = Frame(samples: samples, timestampMs: Int(s.partialStartNs / 1_000_000), capturedNs: s.partialStartNs)
                s.partialStartNs += UInt64(Self.frameMs) * 1_000_000
                if s.fenced {
                    s.held.append(frame)
                    if s.held.count > Self.maxQueuedFrames { s.held.removeFirst() }
                } else if !settings.fullDuplex && playback.isAudible {
                    s.recent.append(frame)
                    if s.recent.count > Self.preRollFrames { s.recent.removeFirst() }
                } else {
                    s.recent.removeAll()
                    s.queued.append(frame)
                    if s.queued.count > Self.maxQueuedFrames { s.queued.removeFirst(); s.dropped += 1 }
                    wake = true
                }
            }
        }
        if bargeIn { onBargeIn() }
        if wake { signal.yield() }
    }

    /// Root mean square as a fraction of full scale.
    static func rms(_ samples: [Int16]) -> Double {
        guard !samples.isEmpty else { return 0 }
        var sum = 0.0
        for s in samples { sum += Double(s) * Double(s) }
        return (sum / Double(samples.count)).squareRoot() / 32768
    }
}
