import Config
import Glibc
import Kit
import Media
import Support
import X11Support

/// screen.snapshot: one frame, encoded straight from the capture memory (shared-memory XImage or
/// the mapped framebuffer) unless it has to be resized, and kept within the payload budget.
enum SnapshotService {
    static func run(_ p: ScreenSnapshotParams, grabber: any ScreenGrabber, budget payload: PayloadBudget,
                    cancel: CancelFlag, log: Logger) throws(NodeError) -> ScreenSnapshotResult {
        try cancel.check()
        let encoder: StillImageEncoder
        do { encoder = try StillImageEncoder() } catch { throw ScreenError.media(error) }
        let format: StillImageFormat = p.isPNG ? .png : .jpeg(quality: p.jpegQuality)
        let budget = payload.stillImageBase64Bytes

        // The display's identity before and after the capture: a monitor that changed in between
        // would make the frame id (and every coordinate mapped through it) wrong.
        let before = grabber.liveIdentity(screenIndex: p.screenIndex)
        let started = ContinuousClock.now
        var grabbed = started
        var capturedAtMs: Int64 = 0
        let image = try grabber.grab(includePointer: p.includePointer) { (view: PixelView) throws(NodeError) -> EncodedImage in
            grabbed = .now
            capturedAtMs = WallClock.milliseconds
            do throws(MediaError) { return try encoder.encode(view, format: format, maxWidth: p.maxWidth, maxBase64Bytes: budget) }
            catch { throw ScreenError.media(error) }
        }
        let done = ContinuousClock.now
        guard let identity = before, grabber.liveIdentity(screenIndex: p.screenIndex) == identity else {
            throw ScreenError.unavailable("the display changed during the capture (resolution or monitors); take the screenshot again")
        }
        let frame = DisplayFrame(identity: identity, referenceWidth: p.maxWidth,
                                 deliveredWidth: image.width, deliveredHeight: image.height)
        if let execution = p.executionId { SnapshotLedger.shared.record(executionId: execution) }
        log.debug("snapshot \(grabber.width)x\(grabber.height) via \(grabber.method): capture \(millis(grabbed - started)) ms, " +
                  "encode \(format.name) \(image.width)x\(image.height) \(millis(done - grabbed)) ms, \(image.data.count) bytes")
        return ScreenSnapshotResult(format: image.format.name, base64: Base64.encode(image.data),
                                    width: image.width, height: image.height, screenIndex: p.screenIndex,
                                    capturedAtMs: capturedAtMs, displayFrameId: frame.id)
    }

    static func millis(_ d: Duration) -> String {
        (d.seconds * 1000).fixed(1)
    }
}
