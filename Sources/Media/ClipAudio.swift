import Glibc
import Kit

/// The microphone track of a clip (screen.record and camera.clip, includeAudio). The payload's
/// `hasAudio` tells whether the clip has sound, so a machine without a usable capture device
/// records video only and logs why; a device that another program holds is MIC_BUSY, since
/// retrying later can succeed. Logging goes through a closure (Media does not depend on NodeHost);
/// `command` names the caller in those lines.
public enum ClipAudio {
    public enum LogLevel: Sendable { case debug, info, warn }
    public typealias Log = (LogLevel, String) -> Void

    /// The microphone is held by another program: report `code` (MIC_BUSY) with `message`.
    public struct Busy: Error, Sendable {
        public let code = MicrophoneError.busyCode
        public let message: String
    }

    /// Opens `device` for a clip: the microphone, or nil (video only, one log line saying why at
    /// `missingLevel`) when there is none or it gives a format AAC cannot carry. Throws `Busy`
    /// when another program has it.
    public static func open(device: String, command: String, missingLevel: LogLevel = .warn,
                            log: Log) throws(Busy) -> MicrophoneCapture? {
        do throws(MicrophoneError) {
            let mic = try MicrophoneCapture(device: device)
            guard AudioSettings.aacSampleRates.contains(mic.sampleRate), (1...2).contains(mic.channels) else {
                log(missingLevel, "\(command): microphone \"\(device)\" gives \(mic.sampleRate) Hz, \(mic.channels) ch, " +
                    "which AAC cannot carry; recording video only (hasAudio false)")
                mic.stop()
                return nil
            }
            log(.debug, "\(command): microphone \"\(device)\" at \(mic.sampleRate) Hz, \(mic.channels) ch")
            return mic
        } catch {
            if error.kind == .busy {
                throw Busy(message: "\(error); another program is using the microphone " +
                           "(retry later, or record with includeAudio false)")
            }
            log(missingLevel, "\(command): includeAudio requested, but \(error); recording video only (hasAudio false). " +
                "Set OPENCLAW_NODE_AUDIO_DEVICE to an ALSA capture PCM (arecord -L lists them)")
            return nil
        }
    }

    /// The AAC track settings for a clip from `mic`.
    public static func settings(_ mic: MicrophoneCapture?, durationMs: Int) -> AudioSettings? {
        mic.map { AudioSettings(sampleRate: $0.sampleRate, channels: $0.channels, clipDurationMs: Int64(durationMs)) }
    }

    /// Moves the chunks captured so far into the recorder (on the recording thread).
    public static func feed(_ queue: AudioChunkQueue, into recorder: any MP4Recording, clipStartNs: UInt64) throws(MediaError) {
        for chunk in queue.takeAll() { try recorder.appendAudio(chunk, clipStartNs: clipStartNs) }
    }

    /// After the last video frame: waits until the clip's end plus one chunk (so the audio covers
    /// the whole clip; the last frame is captured up to a frame interval before the end), stops
    /// the microphone and moves the rest of its audio into the recorder.
    public static func finish(_ mic: MicrophoneCapture, queue: AudioChunkQueue, into recorder: any MP4Recording,
                              clipStartNs: UInt64, durationMs: Int, command: String, log: Log) throws(MediaError) {
        waitForClipEnd(startNs: clipStartNs, durationMs: durationMs)
        if let failure = mic.stop() { log(.warn, "\(command): microphone stopped early: \(failure)") }
        try feed(queue, into: recorder, clipStartNs: clipStartNs)
    }

    /// Whether the finished clip has sound: only when AAC packets reached the file, not merely
    /// because a device opened (logged when a microphone was open but gave nothing).
    public static func hasAudio(_ recorder: any MP4Recording, mic: MicrophoneCapture?, command: String, log: Log) -> Bool {
        let has = recorder.audioPacketsWritten > 0
        if let mic, !has { log(.warn, "\(command): no audio arrived from \"\(mic.device)\"; hasAudio false") }
        return has
    }

    /// Sleeps until `durationMs` after `startNs` (CLOCK_MONOTONIC) plus 30 ms.
    public static func waitForClipEnd(startNs: UInt64, durationMs: Int) {
        let end = startNs + UInt64(durationMs) * 1_000_000 + 30_000_000
        var ts = timespec(tv_sec: Int(end / 1_000_000_000), tv_nsec: Int(end % 1_000_000_000))
        while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nil) == EINTR {}
    }
}
