import Glibc
import Kit
import Media
import Support

/// One open libcamera camera streaming NV12 frames (ocl_open … ocl_close): acquired for the
/// command and released after it, so other programs can have it between commands.
final class LibcameraSession {
    let lib: LibcameraLibrary
    private let handle: UnsafeMutableRawPointer
    let width: Int, height: Int, stride: Int

    init(_ lib: LibcameraLibrary, camera: LibcameraCamera, width: Int, height: Int, video: Bool) throws(NodeError) {
        self.lib = lib
        var error: UnsafeMutablePointer<CChar>?
        guard let h = lib.open(camera.id, Int32(width), Int32(height), video ? 1 : 0, &error) else {
            let why = lib.take(error) ?? "unknown error"
            if why.hasPrefix("busy:") {
                let holder = RpicamFailure.holders().first.map { " (held by \($0))" } ?? ""
                throw CameraError.busy("\(camera.model) is in use by another process\(holder)")
            }
            throw CameraError.unavailable("\(camera.model): \(why)")
        }
        handle = h
        var w: Int32 = 0, hh: Int32 = 0, s: Int32 = 0
        lib.format(h, &w, &hh, &s)
        self.width = Int(w); self.height = Int(hh); stride = Int(s)
    }

    deinit { lib.close(handle) }

    /// The next frame as an NV12 view, valid inside `body`, with its capture time (CLOCK_MONOTONIC ns).
    func withFrame<R>(timeoutMs: Int = 5000, _ body: (PixelView, UInt64) throws(NodeError) -> R) throws(NodeError) -> R {
        var data: UnsafePointer<UInt8>?, length = 0, ts: Int64 = 0
        var error: UnsafeMutablePointer<CChar>?
        guard lib.frame(handle, Int32(timeoutMs), &data, &length, &ts, &error) == 0, let base = data,
              length >= stride * height * 3 / 2 else {
            throw CameraError.unavailable(lib.take(error) ?? "no frame from the camera")
        }
        return try body(PixelView(base: UnsafeRawPointer(base), width: width, height: height, bytesPerRow: stride, layout: .nv12), UInt64(max(0, ts)))
    }
}
