import CALSA
import Glibc
import Support

/// A playback stream kept open between writes, for audio that arrives while it plays (realtime
/// talk's 20 ms chunks), which knows how much of what it was given has been heard. One thread
/// owns it (not Sendable): writes block at most one chunk's time past the device's buffer, so
/// that thread can also stop it at once between writes.
///
/// "Heard" is what was written minus what the device still holds (snd_pcm_delay), and never more
/// than real time allows since playing began: ALSA's `file` and `null` PCMs take any amount at
/// once and report no delay, and `plug`'s rate converter keeps the last partial period until more
/// comes — callers waiting for a position write silence after the audio until it is heard.
public final class AudioOutputStream {
    public let device: String
    /// The rate the device plays at (the request, when it takes it; callers resample otherwise).
    public let sampleRate: Int
    public let channels: Int
    private let pcm: OpaquePointer
    private let alsa: ALSALibrary
    /// Frames handed to the device since it was opened or last stopped.
    public private(set) var written = 0
    /// The real-time bound: `anchorFrames` were heard at `anchorNs`.
    private var anchorNs: UInt64 = 0
    private var anchorFrames = 0
    /// How far writes may run ahead of what was heard (the device's buffer on real hardware).
    private let leadFrames: Int
    private var closed = false

    public init(device: String, sampleRate: Int, bufferMs: Int = 120) throws(AudioPlayback.Failure) {
        self.device = device
        let alsa: ALSALibrary
        switch ALSALibrary.shared {
        case .success(let lib): alsa = lib
        case .failure(let f): throw AudioPlayback.Failure(description: "no audio output: \(f.description)")
        }
        self.alsa = alsa
        var handle: OpaquePointer?
        var rc = alsa.pcmOpen(&handle, device, SND_PCM_STREAM_PLAYBACK, 0)
        guard rc >= 0, let pcm = handle else {
            throw AudioPlayback.Failure(description: "ALSA device \"\(device)\": open for playback: \(alsa.describe(rc)); set capabilities.talk.playbackDevice (aplay -L)")
        }
        let got = alsa.configureS16(pcm, rate: sampleRate, channels: 1, bufferUs: UInt32(bufferMs * 1000))
        rc = got.rc
        guard rc >= 0, got.rate > 0, (1...2).contains(got.channels) else {
            _ = alsa.pcmClose(pcm)
            throw AudioPlayback.Failure(description: "ALSA device \"\(device)\": no S16_LE mono or stereo playback: \(alsa.describe(rc < 0 ? rc : -EINVAL))")
        }
        self.pcm = pcm
        self.sampleRate = got.rate
        channels = got.channels
        leadFrames = got.rate * bufferMs / 1000
    }

    deinit { close() }

    /// Frames of what was written that have been heard.
    public var heard: Int {
        var delay = snd_pcm_sframes_t(0)
        let queued = alsa.pcmDelay(pcm, &delay) >= 0 ? max(0, Int(delay)) : 0
        return max(0, min(written - queued, clockHeard(monotonicNowNs())))
    }

    /// Whether everything written has been heard.
    public var drained: Bool { heard >= written }

    private func clockHeard(_ now: UInt64) -> Int {
        guard anchorNs > 0 else { return 0 }
        return anchorFrames + Int((now - anchorNs) * UInt64(sampleRate) / 1_000_000_000)
    }

    /// Plays `samples` (mono, at `sampleRate`) after what was written before; returns once the
    /// device has them, waiting while more than the buffer's worth is unheard.
    public func write(_ samples: [Int16]) throws(AudioPlayback.Failure) {
        guard !samples.isEmpty, !closed else { return }
        let now = monotonicNowNs()
        // Nothing unheard (the start, or the device ran dry): real time starts again from here.
        if anchorNs == 0 || clockHeard(now) >= written { anchorNs = now; anchorFrames = written }
        while written - heard > leadFrames {
            let ahead = written - heard - leadFrames
            // Cancelled (the reply was interrupted, the node stops): what is unwritten is not played.
            guard Pause.for(.microseconds(min(20_000, max(1_000, ahead * 1_000_000 / sampleRate)))) else { return }
        }
        let frames = channels == 1 ? samples : samples.flatMap { [$0, $0] }
        var offset = 0
        while offset < samples.count {
            let n = frames.withUnsafeBufferPointer { b in
                alsa.pcmWritei(pcm, b.baseAddress! + offset * channels, snd_pcm_uframes_t(samples.count - offset))
            }
            if n < 0 {
                // An underrun (the device ran dry between chunks) is recovered; anything else ends it.
                guard alsa.pcmRecover(pcm, Int32(n), 1) >= 0 else {
                    throw AudioPlayback.Failure(description: "ALSA device \"\(device)\": playback failed: \(alsa.describe(Int32(n)))")
                }
                continue
            }
            offset += n
        }
        written += samples.count
    }

    /// Stops at once, dropping what the device still holds; positions start again from 0.
    public func stopNow() {
        guard !closed else { return }
        _ = alsa.pcmDrop(pcm)
        _ = alsa.pcmPrepare(pcm)
        written = 0; anchorNs = 0; anchorFrames = 0
    }

    /// Lets what was written play out, then closes the device.
    public func finish() {
        guard !closed else { return }
        _ = alsa.pcmDrain(pcm)
        close()
    }

    public func close() {
        guard !closed else { return }
        closed = true
        _ = alsa.pcmClose(pcm)
    }
}
