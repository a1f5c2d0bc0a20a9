import Glibc
import Kit
import Media
import Support

/// camera.snap and camera.clip on a libcamera camera in process (LibcameraLibrary): NV12 frames
/// into the node's own JPEG and H.264 encoders, the same params, results and errors as V4L2.
struct LibcameraCapture {
    /// Keeps libcamera loaded (and its idle release waiting) for as long as the command runs.
    let lease: LibcameraLibrary.Holder.Lease
    var lib: LibcameraLibrary { lease.resource }
    let camera: LibcameraCamera
    let settings: CameraSettings
    let log: Logger

    /// How long frames pass before a still, so exposure and white balance settle (unless
    /// `warmup: never`); a snap's delayMs counts towards it.
    static let settle: Duration = .milliseconds(500)

    func snap(_ p: CameraSnapParams, budget: PayloadBudget, cancel: CancelFlag) throws(NodeError) -> CameraSnapResult {
        let size = requestSize(maxWidth: p.maxWidth)
        let session = try LibcameraSession(lib, camera: camera, width: size.width, height: size.height, video: false)
        let wait = max(.milliseconds(p.delayMs), settings.warmup == .never ? .zero : Self.settle)
        let until = ContinuousClock.now + wait
        while ContinuousClock.now < until {
            try cancel.check()
            try session.withFrame { _, _ throws(NodeError) in }
        }
        let encoder: StillImageEncoder
        do throws(MediaError) { encoder = try StillImageEncoder() } catch { throw CameraError.media(error) }
        let image = try session.withFrame { (view: PixelView, _: UInt64) throws(NodeError) -> EncodedImage in
            do throws(MediaError) {
                return try encoder.encode(view, format: .jpeg(quality: p.jpegQuality), maxWidth: p.maxWidth,
                                          maxBase64Bytes: budget.stillImageBase64Bytes)
            } catch { throw CameraError.media(error) }
        }
        log.debug("camera.snap \(camera.deviceId): \(session.width)x\(session.height) NV12 → \(image.width)x\(image.height) JPEG")
        return CameraSnapResult(base64: Base64.encode(image.data), width: image.width, height: image.height)
    }

    func clip(_ p: CameraClipParams, budget: PayloadBudget, cancel: CancelFlag) throws(NodeError) -> CameraClipResult {
        try ClipService.checkFits(budget)
        let size = requestSize(maxWidth: ClipService.maxWidth)
        // The session lives as long as the recording (the closure keeps it; released at the end).
        return try ClipService.record(p, budget: budget, audioDevice: settings.audioDevice, cancel: cancel, log: log,
                                      source: "\(camera.deviceId) NV12") { () throws(NodeError) -> ClipService.FrameSource in
            let s = try LibcameraSession(lib, camera: camera, width: size.width, height: size.height, video: true)
            return ClipService.FrameSource(width: s.width, height: s.height) { (deliver: (PixelView) throws(NodeError) -> Void) throws(NodeError) in
                try s.withFrame { view, _ throws(NodeError) in try deliver(view) }
            }
        }
    }

    /// What to ask the camera for: `maxWidth` wide at the sensor's aspect (4:3 when it does not
    /// say); libcamera picks the nearest size it can do.
    private func requestSize(maxWidth: Int) -> (width: Int, height: Int) {
        let w = camera.width > 0 ? min(maxWidth, camera.width) : maxWidth
        let aspect = camera.width > 0 && camera.height > 0 ? Double(camera.height) / Double(camera.width) : 0.75
        return (w & ~1, Int((Double(w) * aspect).rounded()) & ~1)
    }
}
