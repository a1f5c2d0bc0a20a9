import Glibc
import Media
import NodeHost

/// screen.record's microphone (includeAudio). The payload's `hasAudio` tells whether the clip has
/// sound, so a machine without a usable capture device records video only and logs why; a device
/// that another program holds is MIC_BUSY, since retrying later can succeed.
enum RecordAudio {
    static func open(device: String, log: Logger) throws(NodeError) -> MicrophoneCapture? {
        do throws(MicrophoneError) {
            let mic = try MicrophoneCapture(device: device)
            guard AudioSettings.aacSampleRates.contains(mic.sampleRate), (1...2).contains(mic.channels) else {
                log.warn("screen.record: microphone \"\(device)\" gives \(mic.sampleRate) Hz, \(mic.channels) ch, which AAC " +
                         "cannot carry; recording video only (hasAudio false)")
                mic.stop()
                return nil
            }
            log.debug("screen.record: microphone \"\(device)\" at \(mic.sampleRate) Hz, \(mic.channels) ch")
            return mic
        } catch {
            if error.kind == .busy {
                throw NodeError(MicrophoneError.busyCode, "\(error); another program is using the microphone " +
                                "(retry later, or record without includeAudio)")
            }
            log.warn("screen.record: includeAudio requested, but \(error); recording video only (hasAudio false). " +
                     "Set OPENCLAW_NODE_AUDIO_DEVICE to an ALSA capture PCM (arecord -L lists them)")
            return nil
        }
    }

    /// Moves the chunks captured so far into the recorder (on the recording thread).
    static func feed(_ queue: AudioChunkQueue, into recorder: MP4Recorder, clipStartNs: UInt64) throws(NodeError) {
        for chunk in queue.takeAll() {
            do throws(MediaError) { try recorder.appendAudio(chunk, clipStartNs: clipStartNs) } catch { throw ScreenError.media(error) }
        }
    }

    /// Sleeps until the clip's end plus one chunk, so the audio covers the whole clip (the last
    /// video frame is captured 1/fps before the end).
    static func waitForClipEnd(startNs: UInt64, durationMs: Int) {
        let end = startNs + UInt64(durationMs) * 1_000_000 + 30_000_000
        var ts = timespec(tv_sec: Int(end / 1_000_000_000), tv_nsec: Int(end % 1_000_000_000))
        while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nil) == EINTR {}
    }
}
