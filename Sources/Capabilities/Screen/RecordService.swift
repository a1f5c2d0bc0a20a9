import Foundation
import Media
import NodeHost

/// screen.record: frames paced by the monotonic clock, converted straight from the capture memory
/// into the encoder's YUV frame, H.264 in an MP4 kept in memory, sized to fit the payload.
/// Runs entirely on its own thread (BlockingThread); polls the cancel flag between frames.
enum RecordService {
    static func run(_ p: ScreenRecordParams, grabber: any ScreenGrabber, maxPayloadBytes: Int,
                    cancel: CancelFlag, log: Logger) throws(NodeError) -> JSONValue {
        let fps = p.effectiveFps, durationMs = p.effectiveDurationMs
        let plan = try RecordPlan.make(sourceWidth: grabber.width, sourceHeight: grabber.height, fps: fps,
                                       durationMs: durationMs, maxPayloadBytes: maxPayloadBytes)
        let recorder: MP4Recorder
        do { recorder = try MP4Recorder(settings: plan.video) } catch { throw ScreenError.media(error) }
        try cancel.check()

        let pacer = FramePacer(fps: fps, durationMs: durationMs)
        var slot: Int? = 0
        var skipped = 0
        while let s = slot {
            try cancel.check()
            pacer.wait(for: s)
            try grabber.grab(includePointer: true) { (view: PixelView) throws(NodeError) in
                do throws(MediaError) { try recorder.append(view, timestampMs: pacer.timestampMs(s)) } catch { throw ScreenError.media(error) }
            }
            if recorder.byteCount > plan.maxBytes { throw tooLarge(recorder.byteCount, plan, maxPayloadBytes) }
            slot = pacer.next(after: s)
            if let n = slot { skipped += n - s - 1 }
        }
        let mp4: Data
        do { mp4 = try recorder.finish(durationMs: Int64(durationMs)) } catch { throw ScreenError.media(error) }
        guard mp4.count <= plan.maxBytes else { throw tooLarge(mp4.count, plan, maxPayloadBytes) }
        log.debug("record \(grabber.width)x\(grabber.height) via \(grabber.method) → \(recorder.encoderName) " +
                  "\(plan.video.width)x\(plan.video.height) ≤\(plan.video.maxBitrate / 1000) kbit/s: \(recorder.framesEncoded) frames " +
                  "(\(skipped) slots skipped), \(mp4.count) bytes")
        if p.wantsAudio { log.info("screen.record: includeAudio requested, but audio capture is not supported yet; hasAudio false") }
        return ["format": "mp4", "base64": .string(mp4.base64EncodedString()),
                "durationMs": .number(Double(durationMs)), "fps": .number(Double(fps)),
                "screenIndex": .number(Double(p.effectiveScreenIndex)), "hasAudio": false]
    }

    private static func tooLarge(_ bytes: Int, _ plan: RecordPlan, _ maxPayloadBytes: Int) -> NodeError {
        ScreenError.tooLarge("the recording reached \(bytes) bytes, over the \(plan.maxBytes) that fit in the gateway's " +
                             "\(maxPayloadBytes)-byte payload as base64; record fewer seconds (durationMs) or frames (fps)")
    }
}
