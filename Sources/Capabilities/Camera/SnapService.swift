import Config
import Glibc
import Kit
import Media
import Support

/// camera.snap on an open session: pick format and size, start (or reuse) the stream, wait
/// delayMs, then encode the first frame the session's warm-up accepts (at once on a camera without
/// automatic adjustments; on one with them, after they had a few frames to settle, counted from
/// STREAMON so the delay's frames count too) — MJPEG passed through when it already fits,
/// YUYV/NV12 (or MJPEG that must be resized) encoded by the shared StillImageEncoder.
enum SnapService {
    static func run(_ p: CameraSnapParams, session: CameraSession, budget payload: PayloadBudget,
                    cancel: CancelFlag, log: Logger) throws(NodeError) -> CameraSnapResult {
        let maxWidth = p.maxWidth
        let started = ContinuousClock.now
        guard let plan = CapturePlan.choose(session.formats, maxWidth: maxWidth) else {
            throw CameraError.unavailable("\(session.device.path) offers no usable frame size")
        }
        let stream: V4L2Stream
        var warm = false
        if let s = session.stream, s.format == plan.format, FrameSize(width: s.width, height: s.height) == plan.size {
            stream = s
            warm = true
            stream.dropQueued()
        } else {
            session.stream = nil  // STREAMOFF before S_FMT, which drivers refuse while streaming
            stream = try V4L2Stream(device: session.device, format: plan.format, size: plan.size)
            session.stream = stream
        }
        if p.delayMs > 0 {
            try sleep(.milliseconds(p.delayMs), cancel: cancel)
            stream.dropQueued()
        }
        let before = stream.dequeued
        var captured = started
        var framesBefore = 0
        let budget = payload.stillImageBase64Bytes
        let image = try stream.withSettledFrame(session.warmup, cancel: cancel) {
            (frame: UnsafeRawBufferPointer) throws(NodeError) -> SnapImage in
            captured = .now
            framesBefore = stream.dequeued
            return try encode(frame, stream: stream, quality: p.jpegQuality, maxWidth: maxWidth, budget: budget)
        }
        // "frame N of the stream, K skipped here": N counts from STREAMON (delay and warm-up
        // frames included), K only what waiting for a settled, intact frame threw away.
        log.debug("snap \(session.device.path) \(plan.format.rawValue) \(plan.size) \(warm ? "warm" : "cold") " +
                  "(\(session.adjustments), \(session.warmup)): frame \(framesBefore) of the stream, " +
                  "\(framesBefore - before) skipped here, taken after \(captured - started), " +
                  "encoded \(image.width)x\(image.height) \(image.data.count) bytes in \(.now - captured)")
        return CameraSnapResult(base64: Base64.encode(image.data), width: image.width, height: image.height)
    }

    static func sleep(_ d: Duration, cancel: CancelFlag) throws(NodeError) {
        // Ends the moment the flag is raised (a condition wait, not a sleep loop).
        _ = cancel.sleep(milliseconds: Int(d.milliseconds))
        try cancel.check()
    }

    static func encode(_ frame: UnsafeRawBufferPointer, stream: V4L2Stream, quality: Int, maxWidth: Int,
                       budget: Int) throws(NodeError) -> SnapImage {
        guard let base = frame.baseAddress, !frame.isEmpty else { throw CameraError.unavailable("empty frame from the camera") }
        do throws(MediaError) {
            let encoder = try StillImageEncoder()
            switch stream.format {
            case .yuyv, .nv12:
                let view = try stream.rawView(frame, base: base)
                return SnapImage(try encoder.encode(view, format: .jpeg(quality: quality), maxWidth: maxWidth, maxBase64Bytes: budget))
            case .mjpeg:
                let jpeg = [UInt8](frame)
                if stream.width <= maxWidth, MJPEGFrame.isStandalone(jpeg), PayloadBudget.fits(bytes: jpeg.count, base64Budget: budget) {
                    return SnapImage(data: jpeg, width: stream.width, height: stream.height)
                }
                let decoded = try ImageDecoder.decodeJPEG(jpeg)
                return try decoded.rgb.withUnsafeBytes { raw in
                    Result { () throws(MediaError) -> SnapImage in
                        let view = PixelView(base: raw.baseAddress!, width: decoded.width, height: decoded.height,
                                             bytesPerRow: decoded.width * 3, layout: .rgb24)
                        return SnapImage(try encoder.encode(view, format: .jpeg(quality: quality), maxWidth: maxWidth, maxBase64Bytes: budget))
                    }
                }.get()
            }
        } catch {
            throw CameraError.media(error)
        }
    }
}

/// The JPEG camera.snap returns.
struct SnapImage {
    let data: [UInt8]
    let width: Int
    let height: Int

    init(data: [UInt8], width: Int, height: Int) { self.data = data; self.width = width; self.height = height }
    init(_ e: EncodedImage) { self.init(data: e.data, width: e.width, height: e.height) }
}

/// MJPEG frames from many UVC cameras omit the Huffman tables (DHT) and rely on the standard
/// ones; such a frame is not a valid JPEG file on its own and must be re-encoded, not passed on.
enum MJPEGFrame {
    static func isStandalone(_ jpeg: [UInt8]) -> Bool {
        guard jpeg.count > 4, jpeg[jpeg.startIndex] == 0xFF, jpeg[jpeg.startIndex + 1] == 0xD8 else { return false }
        var i = jpeg.startIndex + 2
        // Walk the marker segments up to the start of scan.
        while i + 3 < jpeg.endIndex {
            guard jpeg[i] == 0xFF else { return false }
            let marker = jpeg[i + 1]
            if marker == 0xC4 { return true }
            if marker == 0xDA { return false }
            let length = Int(jpeg[i + 2]) << 8 | Int(jpeg[i + 3])
            i += 2 + length
        }
        return false
    }
}
