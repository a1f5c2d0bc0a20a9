import Config
import Kit
import Media
import Support

/// screen.record's side of the shared microphone track (Media's ClipAudio): its log lines and
/// its errors (a busy microphone is MIC_BUSY, a media failure SCREEN's).
enum RecordAudio {
    static let command = "screen.record"

    static func open(device: String, log: Logger) throws(NodeError) -> MicrophoneCapture? {
        do throws(ClipAudio.Busy) { return try ClipAudio.open(device: device, command: command, log: sink(log)) }
        catch { throw NodeError(error.code, error.message) }
    }

    static func feed(_ queue: AudioChunkQueue, into recorder: any MP4Recording, clipStartNs: UInt64) throws(NodeError) {
        do throws(MediaError) { try ClipAudio.feed(queue, into: recorder, clipStartNs: clipStartNs) } catch { throw ScreenError.media(error) }
    }

    static func finish(_ mic: MicrophoneCapture, queue: AudioChunkQueue, into recorder: any MP4Recording, clipStartNs: UInt64,
                       durationMs: Int, log: Logger) throws(NodeError) {
        do throws(MediaError) {
            try ClipAudio.finish(mic, queue: queue, into: recorder, clipStartNs: clipStartNs, durationMs: durationMs,
                                 command: command, log: sink(log))
        } catch { throw ScreenError.media(error) }
    }

    static func hasAudio(_ recorder: any MP4Recording, mic: MicrophoneCapture?, log: Logger) -> Bool {
        ClipAudio.hasAudio(recorder, mic: mic, command: command, log: sink(log))
    }

    static func sink(_ log: Logger) -> ClipAudio.Log {
        { level, message in
            switch level {
            case .debug: log.debug(message)
            case .info: log.info(message)
            case .warn: log.warn(message)
            }
        }
    }
}
