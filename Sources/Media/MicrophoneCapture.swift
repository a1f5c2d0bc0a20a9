import CALSA
import Glibc
import Support

/// ALSA capture from one PCM (default "default"; tests use a `type file` PCM as a fake mic).
/// `init` opens and configures the device, so a missing or busy mic is known before recording
/// starts. `start` reads on a dedicated thread (never a cooperative-pool thread) and delivers
/// timestamped chunks; `stop` ends the thread and closes the device. This instance is the single
/// owner of the snd_pcm_t; callers must call `stop` (a running thread keeps the instance alive).
public final class MicrophoneCapture: @unchecked Sendable {  // the snd_pcm_t pointer; its use is ordered by `state`
    public let device: String
    /// What the device actually gives (the request is 48 kHz; "plug" PCMs convert to it).
    public let sampleRate: Int
    public let channels: Int

    private let pcm: OpaquePointer
    private let alsa: ALSALibrary
    private struct State {
        var stopping = false
        var closed = false
        var threadStarted = false
        /// Set when the capture thread has ended (stop() waits for it before closing the device).
        var threadEnded = false
        var runFailure: MicrophoneError?
    }
    private let state = Locked(State())
    /// Signalled by `stop()`: the capture thread waits on it next to the PCM's descriptors.
    private let stopSignal = Wakeup()

    /// One read's worth: 20 ms, so `stop` returns quickly and chunks stay small.
    private var chunkFrames: Int { max(1, sampleRate / 50) }

    public init(device: String = "default", sampleRate: Int = 48_000, channels: Int = 1) throws(MicrophoneError) {
        self.device = device
        let alsa: ALSALibrary
        switch ALSALibrary.shared {
        case .success(let lib): alsa = lib
        case .failure(let f): throw MicrophoneError(.unavailable, "no audio capture: \(f.description)")
        }
        self.alsa = alsa
        var handle: OpaquePointer?
        // Non-blocking open: a busy hw device then fails with EBUSY instead of waiting for it.
        var rc = alsa.pcmOpen(&handle, device, SND_PCM_STREAM_CAPTURE, SND_PCM_NONBLOCK)
        guard rc >= 0, let handle else { throw MicrophoneError.alsa(alsa, "open", device: device, rc) }
        rc = MicrophoneCapture.configure(alsa, handle, sampleRate: sampleRate, channels: channels)
        guard rc >= 0 else {
            _ = alsa.pcmClose(handle)
            throw MicrophoneError.alsa(alsa, "no S16_LE mono/stereo capture", device: device, rc, kind: .unavailable)
        }
        let actual = MicrophoneCapture.currentFormat(alsa, handle)
        self.sampleRate = actual.rate > 0 ? actual.rate : sampleRate
        self.channels = actual.channels > 0 ? actual.channels : channels
        pcm = handle
    }

    deinit { closeDevice() }

    /// Starts capturing; `deliver` runs on the capture thread for every chunk, and `failed` once
    /// if capture ends on its own (the device went away), so a caller waiting for speech need not
    /// wait for a timeout. Only the first call counts.
    public func start(failed: (@Sendable (MicrophoneError) -> Void)? = nil, _ deliver: @escaping @Sendable (AudioChunk) -> Void) {
        state.withLock { s in
            guard !s.threadStarted, !s.closed else { return }  // started already, or stopped: nothing to read
            BlockingExecutor.startLoop(name: "microphone") { [self] in
                run(deliver)
                state.update { $0.threadEnded = true }
                // After the latch: the handler may stop this capture (stop() waits for the latch).
                if let e = state.withLock({ $0.runFailure }) { failed?(e) }
            }
            s.threadStarted = true
        }
    }

    /// Ends capture (the thread's wait is woken at once), closes the device and returns why capture ended
    /// early, if it did. Safe to call more than once, or without `start`.
    @discardableResult
    public func stop() -> MicrophoneError? {
        let started = state.withLock { s -> Bool in
            s.stopping = true
            return s.threadStarted
        }
        stopSignal.signal()
        // `threadEnded` is a latch: every caller waits for the thread's end, so a second stop()
        // cannot close the device while the thread still reads from it.
        if started { state.wait(until: { $0.threadEnded }) }
        closeDevice()
        return state.withLock { $0.runFailure }
    }

    private func closeDevice() {
        let close = state.withLock { s -> Bool in defer { s.closed = true }; return !s.closed }
        if close { _ = alsa.pcmClose(pcm) }
    }

    private var shouldStop: Bool { state.withLock { $0.stopping } }

    /// Waits until the PCM has audio (its poll descriptors, as snd_pcm_wait does) or `stop()` is
    /// called; false when stopped. A PCM without descriptors falls back to snd_pcm_wait's timeout.
    private func waitForAudio() -> Bool {
        let count = Int(alsa.pollDescriptorsCount(pcm))
        guard count > 0 else {
            if alsa.pcmWait(pcm, 100) < 0 { return !stopSignal.sleep(.milliseconds(10)) }  // an error: read() will say which
            return !shouldStop
        }
        var fds = [pollfd](repeating: pollfd(), count: count + 1)
        while !shouldStop {
            let filled = fds.withUnsafeMutableBufferPointer { b in Int(alsa.pollDescriptors(pcm, b.baseAddress! + 1, UInt32(count))) }
            guard filled > 0 else { return !shouldStop }
            fds[0] = pollfd(fd: stopSignal.fd, events: Int16(POLLIN), revents: 0)
            let rc = poll(&fds, nfds_t(filled + 1), -1)
            if rc < 0 { if errno == EINTR { continue }; return !shouldStop }
            if fds[0].revents != 0 { return false }
            var revents: UInt16 = 0
            let r = fds.withUnsafeMutableBufferPointer { b in alsa.pollDescriptorsRevents(pcm, b.baseAddress! + 1, UInt32(filled), &revents) }
            if r < 0 || revents & UInt16(POLLIN | POLLERR | POLLHUP) != 0 { return true }  // audio, or an error read() reports
        }
        return false
    }

    private func run(_ deliver: @Sendable (AudioChunk) -> Void) {
        let frames = chunkFrames, ch = channels, rate = UInt64(sampleRate)
        var buffer = [Int16](repeating: 0, count: frames * ch)
        _ = alsa.pcmStart(pcm)
        // Timestamps follow the sample clock from the start, re-anchored to the monotonic clock
        // after an overrun (samples were lost, so counting on would drift behind real time).
        var anchorNs = monotonicNowNs()
        var counted: UInt64 = 0
        while !shouldStop {
            let n = buffer.withUnsafeMutableBytes { alsa.pcmReadi(pcm, $0.baseAddress, snd_pcm_uframes_t(frames)) }
            if n == -Int(EAGAIN) || n == 0 {
                if !waitForAudio() { break }
                continue
            }
            if n < 0 {
                let r = alsa.pcmRecover(pcm, Int32(n), 1)
                if r < 0 {
                    let e = MicrophoneError.alsa(alsa, "read", device: device, Int32(n), kind: .failed)
                    state.withLock { $0.runFailure = e }
                    return
                }
                _ = alsa.pcmStart(pcm)
                anchorNs = monotonicNowNs()
                counted = 0
                continue
            }
            let ts = anchorNs + counted * 1_000_000_000 / rate
            counted += UInt64(n)
            deliver(AudioChunk(samples: Array(buffer[0..<(n * ch)]), frames: n, channels: ch, timestampNs: ts))
            // A real device blocks until audio exists; file/null PCMs return it at once (1 s in a
            // few ms). Never run ahead of real time, so every source behaves like a microphone.
            // The pause ends on `stop()` too: a capture that just heard its end is closed at once,
            // not a chunk (20 ms) later. Timestamps count samples, so a late wake-up cannot drift.
            let endNs = anchorNs + counted * 1_000_000_000 / rate
            let nowNs = monotonicNowNs()
            if endNs > nowNs, stopSignal.sleep(.nanoseconds(Int64(endNs - nowNs))) { break }
        }
    }

    /// S16_LE interleaved, the channel count nearest the request (1–2), the rate nearest the
    /// request (a "plug" PCM resamples to it exactly; a bare hw device may give e.g. 44.1 kHz),
    /// and a ~100 ms buffer. Returns a negative alsa-lib code when the device refuses.
    private static func configure(_ alsa: ALSALibrary, _ pcm: OpaquePointer, sampleRate: Int, channels: Int) -> Int32 {
        let got = alsa.configureS16(pcm, rate: sampleRate, channels: min(2, max(1, channels)), bufferUs: 100_000)
        if got.rc >= 0, got.channels > 2 { return -EINVAL }  // more channels than an AAC mono/stereo track takes
        return got.rc
    }

    /// Rate and channels the device was configured with (0 when it cannot tell).
    private static func currentFormat(_ alsa: ALSALibrary, _ pcm: OpaquePointer) -> (rate: Int, channels: Int) {
        var hw: OpaquePointer?
        guard alsa.hwMalloc(&hw) >= 0, let hw else { return (0, 0) }
        defer { alsa.hwFree(hw) }
        guard alsa.hwCurrent(pcm, hw) >= 0 else { return (0, 0) }
        var rate: UInt32 = 0, ch: UInt32 = 0, dir: Int32 = 0
        _ = alsa.hwGetRate(hw, &rate, &dir)
        _ = alsa.hwGetChannels(hw, &ch)
        return (Int(rate), Int(ch))
    }
}
