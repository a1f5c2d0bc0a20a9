import CALSA
import Glibc
import Support

/// Plays 16-bit mono PCM to one ALSA device (spoken replies). Blocking: call it off the cooperative
/// pool. `interrupt()` from another thread stops it within one period (a new push-to-talk wins
/// over the reply being spoken).
public final class AudioPlayback: Sendable {
    public struct Failure: Error, Sendable, CustomStringConvertible { public let description: String }

    public let device: String
    /// Counts interruptions; a playback ends when it changes.
    private let interruptions = Locked(0)

    public init(device: String = "default") { self.device = device }

    /// Stops the playback in progress, and any asked for with an earlier `mark`.
    public func interrupt() { interruptions.withLock { $0 += 1 } }

    /// A mark for `play(…, unlessInterruptedSince:)`: speech prepared after it (a reply still being
    /// synthesized) is not played if an interruption came in between.
    public var mark: Int { interruptions.withLock { $0 } }

    /// Plays all of `samples` (mono, `sampleRate`) and waits until they have been heard, unless
    /// interrupted (since `mark`, when given): false when it was.
    @discardableResult
    public func play(_ samples: [Int16], sampleRate: Int, unlessInterruptedSince mark: Int? = nil) throws(Failure) -> Bool {
        let alsa: ALSALibrary
        switch ALSALibrary.shared {
        case .success(let lib): alsa = lib
        case .failure(let f): throw Failure(description: "no audio output: \(f.description)")
        }
        let started = mark ?? self.mark
        func interrupted() -> Bool { interruptions.withLock { $0 != started } }
        if interrupted() { return false }
        var handle: OpaquePointer?
        var rc = alsa.pcmOpen(&handle, device, SND_PCM_STREAM_PLAYBACK, 0)
        guard rc >= 0, let pcm = handle else {
            throw Failure(description: "ALSA device \"\(device)\": open for playback: \(alsa.describe(rc)); set capabilities.talk.playbackDevice (aplay -L)")
        }
        defer { _ = alsa.pcmClose(pcm) }
        rc = Self.configure(alsa, pcm, sampleRate: sampleRate)
        guard rc >= 0 else { throw Failure(description: "ALSA device \"\(device)\": no S16_LE mono at \(sampleRate) Hz: \(alsa.describe(rc))") }
        let period = max(1, sampleRate / 20)  // 50 ms per write: interrupt() is noticed quickly
        var offset = 0
        while offset < samples.count {
            if interrupted() { _ = alsa.pcmDrop(pcm); return false }
            let n = min(period, samples.count - offset)
            let written = samples.withUnsafeBufferPointer { alsa.pcmWritei(pcm, $0.baseAddress! + offset, snd_pcm_uframes_t(n)) }
            if written < 0 {
                guard alsa.pcmRecover(pcm, Int32(written), 1) >= 0 else {
                    throw Failure(description: "ALSA device \"\(device)\": playback failed: \(alsa.describe(Int32(written)))")
                }
                continue
            }
            offset += written
        }
        _ = alsa.pcmDrain(pcm)
        return true
    }

    private static func configure(_ alsa: ALSALibrary, _ pcm: OpaquePointer, sampleRate: Int) -> Int32 {
        let got = alsa.configureS16(pcm, rate: sampleRate, channels: 1)
        // Mono at exactly this rate ("plug" devices resample); anything else would play wrongly.
        if got.rc >= 0, got.channels != 1 || got.rate != sampleRate { return -EINVAL }
        return got.rc
    }
}
