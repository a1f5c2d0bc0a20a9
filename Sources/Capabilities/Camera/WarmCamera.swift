import Config
import Glibc
import Kit
import Support

/// An open device with what it offers and, once a snap ran, its running stream.
final class CameraSession {
    let device: V4L2Device
    let formats: [CameraPixelFormat: [FrameSize]]
    /// What the device adjusts by itself, read when it is opened, and so which first frames of a
    /// new stream are too early to use.
    let adjustments: AutoAdjustments
    let warmup: Warmup
    /// Replaced when a snap needs another format or size; releasing it stops streaming.
    var stream: V4L2Stream?

    init(path: String, warmup mode: CameraWarmupMode) throws(NodeError) {
        device = try V4L2Device(path: path)
        guard try device.identity().isCapture else { throw CameraError.unavailable("\(path) is not a video capture device") }
        formats = device.formats()
        guard !formats.isEmpty else { throw CameraError.unavailable("\(path) offers none of the formats the node reads (YUYV, NV12, MJPEG)") }
        adjustments = device.autoAdjustments()
        warmup = Warmup.choose(mode, adjustments)
    }
}

/// Keeps the last camera session streaming for a short idle period, so repeated snaps skip the
/// open, format negotiation and exposure warm-up. After the idle period it is released (STREAMOFF,
/// buffers unmapped, fd closed) so other applications can use the camera. One session at a time;
/// a session is either checked out (in use by one command) or idle here.
final class WarmCamera: Sendable {
    /// Unchecked: an idle session is held only here, under the lock, and handed whole to the one
    /// command that checks it out (never used by two at once).
    private struct State: @unchecked Sendable {
        var idle: (path: String, session: CameraSession, generation: Int)?
        var generation = 0
    }
    private let state = Locked(State())
    private let idleRelease: Duration

    init(idleRelease: Duration) { self.idleRelease = idleRelease }

    /// The idle session for `path`, or nil (any other idle session is released first, because a
    /// different camera is wanted and holding two helps nobody).
    func checkout(path: String) -> CameraSession? {
        let (hit, stale) = state.withLock { s -> (CameraSession?, CameraSession?) in
            defer { s.idle = nil }
            guard let i = s.idle else { return (nil, nil) }
            return i.path == path ? (i.session, nil) : (nil, i.session)
        }
        _ = stale  // released here, outside the lock
        return hit
    }

    /// Gives a session back after a successful command; it is released after the idle period.
    func checkin(_ session: CameraSession, path: String) {
        guard idleRelease > .zero else { return }
        let g: Int = state.withLock { s in
            s.generation += 1
            s.idle = (path, session, s.generation)
            return s.generation
        }
        // The timer thread only hands the release (STREAMOFF, munmap, close) to a job.
        DeadlineTimer.shared.schedule(at: .now + idleRelease) { [weak self] in
            guard let self else { return }
            BlockingExecutor.start("camera-release") { self.expire(generation: g) }
        }
    }

    func clear() {
        let old = state.withLock { s -> CameraSession? in defer { s.idle = nil }; return s.idle?.session }
        _ = old
    }

    var hasIdleSession: Bool { state.withLock { $0.idle != nil } }

    private func expire(generation g: Int) {
        let old = state.withLock { s -> CameraSession? in
            guard let i = s.idle, i.generation == g else { return nil }
            s.idle = nil
            return i.session
        }
        _ = old
    }
}
