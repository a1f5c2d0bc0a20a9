import Config
import Glibc
import Kit
import Media
import Support

/// camera.clip: frames as the camera delivers them (stamped with the monotonic time since the
/// first), converted straight from the mmap'd buffer (YUYV, NV12) or decoded (MJPEG) into the shared
/// H.264/MP4 recorder, at a bitrate capped so the MP4 fits the gateway's payload. With includeAudio
/// (the default) the ALSA microphone is captured on its own thread and muxed as AAC on the same
/// monotonic clock (Media's ClipAudio, shared with screen.record); without a microphone the clip
/// is video only and hasAudio false.
enum ClipService {
    /// HD720 like the Windows node; larger frames only cost encode time on small machines.
    static let maxWidth = 1280
    static let fps = 30
    static let maxBitrate = 4_000_000

    static let command = "camera.clip"

    static func run(_ p: CameraClipParams, session: CameraSession, budget: PayloadBudget, audioDevice: String,
                    cancel: CancelFlag, log: Logger) throws(NodeError) -> CameraClipResult {
        let durationMs = p.effectiveDurationMs
        let maxPayloadBytes = budget.maxPayloadBytes
        let maxBytes = budget.mediaBytes
        guard maxBytes >= 16 * 1024 else {
            throw CameraError.tooLarge("the gateway accepts only \(maxPayloadBytes) bytes per result; no clip fits")
        }
        guard let plan = CapturePlan.choose(session.formats, maxWidth: maxWidth) else {
            throw CameraError.unavailable("\(session.device.path) offers no usable frame size")
        }
        // The microphone first: a busy one fails before anything is recorded, a missing one means
        // video only (logged as a warning only when the caller asked for audio explicitly).
        let mic = p.wantsAudio ? try openMicrophone(audioDevice, explicit: p.audioRequested, log: log) : nil
        defer { mic?.stop() }
        let audio = ClipAudio.settings(mic, durationMs: durationMs)
        // One extra second covers the VBV buffer and the MP4 index; the AAC track takes its share.
        let budget = Int(clamping: Double(maxBytes) * 8 / (Double(durationMs) / 1000 + 1) * 0.85, to: 0...maxBitrate)
        let bitrate = max(1, budget - (audio?.bitrate ?? 0))
        session.stream = nil
        let stream = try V4L2Stream(device: session.device, format: plan.format, size: plan.size)
        session.stream = stream
        try stream.settle(session.warmup, cancel: cancel)

        let fitted = ImageSize.fitting(width: stream.width, height: stream.height, maxWidth: maxWidth)
        let size = ImageSize.evenScaled(width: fitted.width, height: fitted.height, factor: 1)
        let recorder: any MP4Recording
        do {
            recorder = try VideoEncoding.recorder(settings: VideoSettings(width: size.width, height: size.height, fps: fps, maxBitrate: bitrate),
                                       audio: audio)
        } catch { throw CameraError.media(error) }

        let queue = AudioChunkQueue()
        mic?.start { queue.push($0) }
        stream.dropQueued()
        // CLOCK_MONOTONIC ns of the first frame (video timestamp 0), the clock audio chunks carry.
        var start: UInt64? = nil
        var lastMs: Int64 = -1
        while true {
            try cancel.check()
            let done = try stream.withFrame(cancel: cancel) { (frame: UnsafeRawBufferPointer) throws(NodeError) -> Bool in
                let now = monotonicNowNs()
                let t0 = start ?? now
                start = t0
                let ms = Int64((now - t0) / 1_000_000)
                guard ms < Int64(durationMs) else { return true }
                guard ms > lastMs else { return false }
                lastMs = ms
                try append(frame, stream: stream, to: recorder, timestampMs: ms)
                return false
            }
            if let t0 = start {
                do throws(MediaError) { try ClipAudio.feed(queue, into: recorder, clipStartNs: t0) } catch { throw CameraError.media(error) }
            }
            if done { break }
            if recorder.byteCount > maxBytes { throw tooLarge(recorder.byteCount, maxBytes, maxPayloadBytes) }
        }
        if let mic, let t0 = start {
            do throws(MediaError) {
                try ClipAudio.finish(mic, queue: queue, into: recorder, clipStartNs: t0, durationMs: durationMs,
                                     command: command, log: logSink(log))
            } catch { throw CameraError.media(error) }
        }
        let mp4: [UInt8]
        do { mp4 = try recorder.finish(durationMs: Int64(durationMs)) } catch { throw CameraError.media(error) }
        guard mp4.count <= maxBytes else { throw tooLarge(mp4.count, maxBytes, maxPayloadBytes) }
        // hasAudio only when AAC actually reached the file, not merely because a device opened.
        let hasAudio = ClipAudio.hasAudio(recorder, mic: mic, command: command, log: logSink(log))
        log.debug("clip \(session.device.path) \(plan.format.rawValue) \(plan.size) → \(recorder.encoderName) " +
                  "\(size.width)x\(size.height) ≤\(bitrate / 1000) kbit/s: \(recorder.framesEncoded) frames, " +
                  "\(recorder.audioPacketsWritten) AAC packets, \(mp4.count) bytes")
        return CameraClipResult(base64: Base64.encode(mp4), durationMs: durationMs, hasAudio: hasAudio)
    }

    /// The microphone for the clip, nil when there is none (one log line: a warning when the
    /// caller asked for audio, info when it is only the default); MIC_BUSY when another program has it.
    private static func openMicrophone(_ device: String, explicit: Bool, log: Logger) throws(NodeError) -> MicrophoneCapture? {
        do throws(ClipAudio.Busy) {
            return try ClipAudio.open(device: device, command: command, missingLevel: explicit ? .warn : .info, log: logSink(log))
        } catch { throw NodeError(error.code, error.message) }
    }

    private static func logSink(_ log: Logger) -> ClipAudio.Log {
        { level, message in
            switch level {
            case .debug: log.debug(message)
            case .info: log.info(message)
            case .warn: log.warn(message)
            }
        }
    }

    private static func append(_ frame: UnsafeRawBufferPointer, stream: V4L2Stream, to recorder: any MP4Recording,
                               timestampMs: Int64) throws(NodeError) {
        guard let base = frame.baseAddress, !frame.isEmpty else { throw CameraError.unavailable("empty frame from the camera") }
        do throws(MediaError) {
            switch stream.format {
            case .yuyv, .nv12:
                try recorder.append(try stream.rawView(frame, base: base), timestampMs: timestampMs)
            case .mjpeg:
                let decoded = try ImageDecoder.decodeJPEG([UInt8](frame))
                try decoded.rgb.withUnsafeBytes { raw in
                    Result { () throws(MediaError) in
                        try recorder.append(PixelView(base: raw.baseAddress!, width: decoded.width, height: decoded.height,
                                                      bytesPerRow: decoded.width * 3, layout: .rgb24), timestampMs: timestampMs)
                    }
                }.get()
            }
        } catch {
            throw CameraError.media(error)
        }
    }

    private static func tooLarge(_ bytes: Int, _ maxBytes: Int, _ maxPayloadBytes: Int) -> NodeError {
        CameraError.tooLarge("the clip reached \(bytes) bytes, over the \(maxBytes) that fit in the gateway's " +
                             "\(maxPayloadBytes)-byte payload as base64; record fewer seconds (durationMs)")
    }
}
