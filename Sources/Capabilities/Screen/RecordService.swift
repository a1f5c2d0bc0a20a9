import Config
import Glibc
import Kit
import Media
import Support

/// screen.record: frames paced by the monotonic clock, converted straight from the capture memory
/// into the encoder's YUV frame, H.264 in an MP4 kept in memory, sized to fit the payload. Slots
/// where the screen did not change (the grabber's ScreenChangeWatch: X11 DAMAGE, GNOME's frame
/// numbers) repeat the previous picture without capturing, converting or encoding it. With
/// includeAudio the microphone is captured on its own thread and muxed as AAC on the same clock.
/// Runs entirely on its own thread (BlockingExecutor); polls the cancel flag between frames.
enum RecordService {
    /// On a still screen, a frame is still captured this often.
    static let refreshSeconds = 1

    static func run(_ p: ScreenRecordParams, grabber: any ScreenGrabber, budget: PayloadBudget, audioDevice: String,
                    cancel: CancelFlag, log: Logger) throws(NodeError) -> ScreenRecordResult {
        let maxPayloadBytes = budget.maxPayloadBytes
        let fps = p.fps, durationMs = p.durationMs
        // The microphone first: a busy one fails before anything is recorded, a missing one means video only.
        let mic = p.includeAudio ? try RecordAudio.open(device: audioDevice, log: log) : nil
        defer { mic?.stop() }
        let audio = ClipAudio.settings(mic, durationMs: durationMs)
        let plan = try RecordPlan.make(sourceWidth: grabber.width, sourceHeight: grabber.height, fps: fps,
                                       durationMs: durationMs, maxPayloadBytes: maxPayloadBytes,
                                       audioBitrate: audio?.bitrate ?? 0)
        let recorder: any MP4Recording
        do { recorder = try VideoEncoding.recorder(settings: plan.video, audio: audio) } catch { throw ScreenError.media(error) }
        try cancel.check()

        try grabber.prepare(includePointer: true)
        let changes = grabber.watchChanges(includePointer: true)
        let queue = AudioChunkQueue()
        mic?.start { queue.push($0) }
        let pacer = FramePacer(fps: fps, durationMs: durationMs)
        var slot: Int? = 0
        var skipped = 0, unchanged = 0, lastCaptured = Int.min / 2
        while let s = slot {
            try cancel.check()
            pacer.wait(for: s)
            // A slot where nothing changed repeats the previous picture: no capture and no
            // conversion, and the encoder's work on an identical picture is small. The clip keeps
            // a frame in every slot (players and `ffmpeg -ss` expect a constant rate). Once a
            // second the screen is captured anyway, in case a change went unreported.
            let changed = changes?.changedSinceLastLook() ?? true
            if changed || s - lastCaptured >= max(1, fps * RecordService.refreshSeconds) {
                try grabber.grab(includePointer: true) { (view: PixelView) throws(NodeError) in
                    do throws(MediaError) { try recorder.append(view, timestampMs: pacer.timestampMs(s)) } catch { throw ScreenError.media(error) }
                }
                lastCaptured = s
            } else {
                do throws(MediaError) { try recorder.repeatPrevious(timestampMs: pacer.timestampMs(s)) } catch { throw ScreenError.media(error) }
                unchanged += 1
            }
            try RecordAudio.feed(queue, into: recorder, clipStartNs: pacer.startNs)
            if recorder.byteCount > plan.maxBytes { throw tooLarge(recorder.byteCount, plan, maxPayloadBytes) }
            slot = pacer.next(after: s)
            if let n = slot { skipped += n - s - 1 }
        }
        if let mic {
            try RecordAudio.finish(mic, queue: queue, into: recorder, clipStartNs: pacer.startNs, durationMs: durationMs, log: log)
        }
        let mp4: [UInt8]
        do { mp4 = try recorder.finish(durationMs: Int64(durationMs)) } catch { throw ScreenError.media(error) }
        guard mp4.count <= plan.maxBytes else { throw tooLarge(mp4.count, plan, maxPayloadBytes) }
        // hasAudio only when AAC actually reached the file, not merely because a device opened.
        let hasAudio = RecordAudio.hasAudio(recorder, mic: mic, log: log)
        let passedOver = recorder.rejectedEncoders.isEmpty ? "" : " (not used: \(recorder.rejectedEncoders.joined(separator: "; ")))"
        log.debug("record \(grabber.width)x\(grabber.height) via \(grabber.method) → \(recorder.encoderName)\(passedOver) " +
                  "\(plan.video.width)x\(plan.video.height) ≤\(plan.video.maxBitrate / 1000) kbit/s: \(recorder.framesEncoded) frames (\(recorder.framesRepeated) repeated as skip frames) " +
                  "(\(unchanged) slots unchanged, \(skipped) skipped), \(recorder.audioPacketsWritten) AAC packets, \(mp4.count) bytes")
        return ScreenRecordResult(base64: Base64.encode(mp4), durationMs: durationMs, fps: fps,
                                  screenIndex: p.screenIndex, hasAudio: hasAudio)
    }

    private static func tooLarge(_ bytes: Int, _ plan: RecordPlan, _ maxPayloadBytes: Int) -> NodeError {
        ScreenError.tooLarge("the recording reached \(bytes) bytes, over the \(plan.maxBytes) that fit in the gateway's " +
                             "\(maxPayloadBytes)-byte payload as base64; record fewer seconds (durationMs) or frames (fps)")
    }
}
