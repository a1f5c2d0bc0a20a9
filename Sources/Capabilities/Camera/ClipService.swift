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
    /// A frame's time at `fps`, and how early a frame may come for its slot (a camera's jitter).
    static let frameIntervalMs = 1000.0 / Double(fps)
    static let frameSlackMs = frameIntervalMs / 4

    static let command = "camera.clip"

    static func run(_ p: CameraClipParams, session: CameraSession, budget: PayloadBudget, audioDevice: String,
                    cancel: CancelFlag, log: Logger) throws(NodeError) -> CameraClipResult {
        try checkFits(budget)
        guard let plan = CapturePlan.choose(session.formats, maxWidth: maxWidth) else {
            throw CameraError.unavailable("\(session.device.path) offers no usable frame size")
        }
        return try record(p, budget: budget, audioDevice: audioDevice, cancel: cancel, log: log, source: "\(session.device.path) \(plan.format.rawValue) \(plan.size)") {
            () throws(NodeError) -> FrameSource in
            session.stream = nil
            let stream = try V4L2Stream(device: session.device, format: plan.format, size: plan.size)
            session.stream = stream
            try stream.settle(session.warmup, cancel: cancel)
            stream.dropQueued()
            return FrameSource(width: stream.width, height: stream.height) { (deliver: (PixelView) throws(NodeError) -> Void) throws(NodeError) in
                try stream.withFrame(cancel: cancel) { (frame: UnsafeRawBufferPointer) throws(NodeError) -> Void in
                    try view(frame, stream: stream, deliver)
                }
            }
        }
    }

    /// Frames of one camera for `record`: its size, and a call that delivers the next frame.
    struct FrameSource {
        let width: Int
        let height: Int
        let next: ((PixelView) throws(NodeError) -> Void) throws(NodeError) -> Void
    }

    /// A payload too small for any clip is refused before the camera is touched.
    static func checkFits(_ budget: PayloadBudget) throws(NodeError) {
        guard budget.mediaBytes >= 16 * 1024 else {
            throw CameraError.tooLarge("the gateway accepts only \(budget.maxPayloadBytes) bytes per result; no clip fits")
        }
    }

    /// What every camera's clip does around its frames (V4L2 here, libcamera's too): the
    /// microphone first (a busy one fails before anything is recorded), the bitrate that lets the
    /// MP4 fit the payload, the recorder at the source's size (up to 1280 wide), frames stamped
    /// from the first, audio fed as it comes, and the size kept in check.
    static func record(_ p: CameraClipParams, budget: PayloadBudget, audioDevice: String, cancel: CancelFlag, log: Logger,
                       source name: String, open: () throws(NodeError) -> FrameSource) throws(NodeError) -> CameraClipResult {
        let durationMs = p.durationMs
        let maxPayloadBytes = budget.maxPayloadBytes
        let maxBytes = budget.mediaBytes
        let mic = p.wantsAudio ? try openMicrophone(audioDevice, explicit: p.audioRequested, log: log) : nil
        defer { mic?.stop() }
        let audio = ClipAudio.settings(mic, durationMs: durationMs)
        // One extra second covers the VBV buffer and the MP4 index; the AAC track takes its share.
        let budget = Int(clamping: Double(maxBytes) * 8 / (Double(durationMs) / 1000 + 1) * 0.85, to: 0...maxBitrate)
        let bitrate = max(1, budget - (audio?.bitrate ?? 0))
        let frames = try open()
        let fitted = ImageSize.fitting(width: frames.width, height: frames.height, maxWidth: maxWidth)
        let size = ImageSize.evenScaled(width: fitted.width, height: fitted.height, factor: 1)
        let recorder: any MP4Recording
        do {
            recorder = try VideoEncoding.recorder(settings: VideoSettings(width: size.width, height: size.height, fps: fps, maxBitrate: bitrate),
                                       audio: audio)
        } catch { throw CameraError.media(error) }

        let queue = AudioChunkQueue()
        mic?.start { queue.push($0) }
        // CLOCK_MONOTONIC ns of the first frame (video timestamp 0), the clock audio chunks carry.
        var start: UInt64? = nil
        var lastMs: Int64 = -1
        var nextSlotMs = 0.0
        var done = false
        while !done {
            try cancel.check()
            try frames.next { (view: PixelView) throws(NodeError) in
                let now = monotonicNowNs()
                let t0 = start ?? now
                start = t0
                let ms = Int64((now - t0) / 1_000_000)
                guard ms < Int64(durationMs) else { done = true; return }
                // At most the clip's frame rate: a camera that delivers faster (60 fps, a virtual
                // camera with no clock) has its extra frames dropped; a 30 fps one's jitter passes.
                guard lastMs < 0 || Double(ms) >= nextSlotMs - frameSlackMs else { return }
                nextSlotMs = max(nextSlotMs + frameIntervalMs, Double(ms) + frameIntervalMs - frameSlackMs)
                lastMs = ms
                do throws(MediaError) { try recorder.append(view, timestampMs: ms) } catch { throw CameraError.media(error) }
            }
            if let t0 = start {
                do throws(MediaError) { try ClipAudio.feed(queue, into: recorder, clipStartNs: t0) } catch { throw CameraError.media(error) }
            }
            if !done, recorder.byteCount > maxBytes { throw tooLarge(recorder.byteCount, maxBytes, maxPayloadBytes) }
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
        log.debug("clip \(name) → \(recorder.encoderName) \(size.width)x\(size.height) ≤\(bitrate / 1000) kbit/s: " +
                  "\(recorder.framesEncoded) frames, \(recorder.audioPacketsWritten) AAC packets, \(mp4.count) bytes")
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

    /// One V4L2 frame as a view of its pixels: in place (YUYV, NV12) or decoded (MJPEG).
    private static func view(_ frame: UnsafeRawBufferPointer, stream: V4L2Stream,
                             _ deliver: (PixelView) throws(NodeError) -> Void) throws(NodeError) {
        guard let base = frame.baseAddress, !frame.isEmpty else { throw CameraError.unavailable("empty frame from the camera") }
        switch stream.format {
        case .yuyv, .nv12:
            let view: PixelView
            do throws(MediaError) { view = try stream.rawView(frame, base: base) } catch { throw CameraError.media(error) }
            try deliver(view)
        case .mjpeg:
            let decoded: DecodedImage
            do throws(MediaError) { decoded = try ImageDecoder.decodeJPEG([UInt8](frame)) } catch { throw CameraError.media(error) }
            var failure: NodeError?
            decoded.rgb.withUnsafeBytes { raw in
                do throws(NodeError) {
                    try deliver(PixelView(base: raw.baseAddress!, width: decoded.width, height: decoded.height,
                                          bytesPerRow: decoded.width * 3, layout: .rgb24))
                } catch { failure = error }
            }
            if let failure { throw failure }
        }
    }

    private static func tooLarge(_ bytes: Int, _ maxBytes: Int, _ maxPayloadBytes: Int) -> NodeError {
        CameraError.tooLarge("the clip reached \(bytes) bytes, over the \(maxBytes) that fit in the gateway's " +
                             "\(maxPayloadBytes)-byte payload as base64; record fewer seconds (durationMs)")
    }
}
