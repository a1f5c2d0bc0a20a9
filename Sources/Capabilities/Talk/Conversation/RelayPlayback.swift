import Glibc
import Kit
import Media
import Support

/// Plays a realtime conversation's reply audio as it arrives (20 ms chunks, in bursts, unpaced),
/// on its own thread: queued per turn, stopped at once by `clear`, and marks acknowledged only
/// when playback has really reached them — after the audio before the mark was heard, with
/// silence written after it so a `plug` device's held-back partial period comes out (a mark must
/// not wait for a delay that never reaches zero).
final class RelayPlayback: Sendable {
    /// The relay's rate (the gateway's PCM16 output).
    static let wireRate = 24_000
    private enum Item { case audio([Int16]), mark(String) }
    private struct State {
        var items: [Item] = []
        var turnId: String?
        /// Raised by `clear`, consumed by the thread.
        var clears = 0
        var stopping = false
        /// Something written is not heard yet, or waits in `items`.
        var playing = false
        /// When the current reply's first sample went out (barge-in waits a little after it).
        var outputStartedNs: UInt64?
        /// The end of the echo tail after the last reply.
        var quietAfterNs: UInt64 = 0
        var failure: String?
        /// For the latency log: when the first chunk of the turn arrived.
        var firstChunkNs: UInt64?
    }
    private let state = Locked(State())
    private let device: String
    private let echoTailNs: UInt64
    private let onMark: @Sendable (String) -> Void
    /// Given everything written to the speaker (full duplex's echo reference).
    private let reference: EchoCanceller?
    private let log: Logger
    private let ended = Locked(false)

    init(device: String, echoTail: Duration, reference: EchoCanceller? = nil, log: Logger, onMark: @escaping @Sendable (String) -> Void) {
        self.device = device
        self.reference = reference
        echoTailNs = UInt64(echoTail.milliseconds) * 1_000_000
        self.log = log
        self.onMark = onMark
        BlockingExecutor.startLoop(name: "talk-playback") { [self] in
            run()
            ended.update { $0 = true }
        }
    }

    /// Queues reply audio of `turnId`; audio of an earlier turn still queued or playing is dropped.
    func enqueue(_ pcm: [Int16], turnId: String) {
        state.update { s in
            if s.turnId != turnId {
                if s.turnId != nil, s.playing { s.items.removeAll(); s.clears += 1 }
                s.turnId = turnId
                s.firstChunkNs = monotonicNowNs()
            }
            s.items.append(.audio(pcm))
            s.playing = true
        }
    }

    /// Acknowledged once everything queued before it has been heard.
    func mark(_ name: String) { state.update { $0.items.append(.mark(name)) } }

    /// Stops playback now and drops what is queued; pending marks are acknowledged.
    func clear() {
        state.update { s in
            s.items.removeAll { if case .audio = $0 { return true } else { return false } }
            s.clears += 1
        }
    }

    /// The turn whose audio is playing or queued.
    var currentTurn: String? { state.withLock { $0.playing ? $0.turnId : nil } }

    /// Whether reply audio is playing (or queued).
    var isPlaying: Bool { state.withLock { $0.playing } }

    /// Playing, or within the echo tail after it: half-duplex keeps the microphone closed.
    var isAudible: Bool { state.withLock { $0.playing || monotonicNowNs() < $0.quietAfterNs } }

    /// How long the current reply has been heard (nil when none plays).
    var playingFor: Duration? {
        state.withLock { s in s.playing ? s.outputStartedNs.map { .nanoseconds(Int64(monotonicNowNs() - $0)) } : nil }
    }

    /// Why playback stopped working, if it did (the device went away).
    var failure: String? { state.withLock { $0.failure } }

    /// Ends the thread (marks still pending are acknowledged: nothing will play them).
    func stop() {
        state.update { $0.stopping = true }
        ended.wait(until: { $0 })
    }

    private func run() {
        var out: AudioOutputStream?
        var resampler: AudioResampler?
        var pending: [(name: String, at: Int)] = []
        var seenClears = 0
        func ackAll() { for m in pending { onMark(m.name) }; pending.removeAll() }
        defer { ackAll(); out?.close() }
        while true {
            // Sleep until there is something to do; while audio or a mark is unheard, look again
            // every 10 ms (the device's position moves on its own).
            let busy = !pending.isEmpty || (out.map { !$0.drained } ?? false)
            state.wait(until: { $0.stopping || !$0.items.isEmpty || $0.clears != seenClears }, timeout: busy ? .milliseconds(10) : .seconds(1))
            let (item, clears, stopping) = state.withLock { s -> (Item?, Int, Bool) in
                let first = s.items.isEmpty ? nil : s.items.removeFirst()
                return (first, s.clears, s.stopping)
            }
            if stopping { return }
            if clears != seenClears {
                seenClears = clears
                out?.stopNow()
                resampler.map { resampler = AudioResampler(from: $0.inputRate, to: $0.outputRate) }
                ackAll()
                state.update { s in
                    if s.items.isEmpty { s.playing = false; s.outputStartedNs = nil; s.quietAfterNs = monotonicNowNs() + echoTailNs }
                }
            }
            do throws(AudioPlayback.Failure) {
                switch item {
                case .audio(let pcm):
                    if out == nil {
                        let opened = try AudioOutputStream(device: device, sampleRate: Self.wireRate)
                        if opened.sampleRate != Self.wireRate {
                            log.info("playback device \"\(device)\" plays at \(opened.sampleRate) Hz; the reply is resampled from 24 kHz")
                            resampler = AudioResampler(from: Self.wireRate, to: opened.sampleRate)
                        }
                        out = opened
                    }
                    let samples = resampler.map { r in var r = r; defer { resampler = r }; return r.process(pcm) } ?? pcm
                    try out!.write(samples)
                    reference?.render(samples, rate: out!.sampleRate)
                    let first = state.withLock { s -> UInt64? in
                        if s.outputStartedNs == nil { s.outputStartedNs = monotonicNowNs() }
                        defer { s.firstChunkNs = nil }
                        return s.firstChunkNs
                    }
                    if let first { log.debug("reply audio: first sample written \((monotonicNowNs() - first) / 1_000) µs after its chunk arrived") }
                case .mark(let name):
                    if var r = resampler, let o = out { try o.write(r.flush()); resampler = r }
                    pending.append((name, out?.written ?? 0))
                case nil:
                    break
                }
                guard let o = out else { ackAll(); continue }
                let heard = o.heard
                while let m = pending.first, m.at <= heard { onMark(m.name); pending.removeFirst() }
                // A mark not heard yet and nothing more to play: silence carries the audio out.
                if !pending.isEmpty, state.withLock({ $0.items.isEmpty }) {
                    let silence = [Int16](repeating: 0, count: o.sampleRate / 50)
                    try o.write(silence)
                    reference?.render(silence, rate: o.sampleRate)
                }
                if o.drained || (pending.isEmpty && heard >= o.written) {
                    state.update { s in
                        if s.items.isEmpty, s.playing { s.playing = false; s.outputStartedNs = nil; s.quietAfterNs = monotonicNowNs() + echoTailNs }
                    }
                }
            } catch {
                log.warn("reply audio cannot be played: \(error.description)")
                state.update { s in s.failure = error.description; s.items.removeAll(); s.playing = false }
                out?.close(); out = nil
                ackAll()
            }
        }
    }
}
