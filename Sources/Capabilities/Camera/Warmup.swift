import Support

/// `capabilities.camera.warmup`: when the first frames after STREAMON are thrown away.
enum CameraWarmupMode: String, Sendable {
    /// Only on a camera that reports automatic exposure, gain or white balance running.
    case auto
    /// On every camera: for one that adjusts itself without a control that says so (a sensor
    /// whose exposure loop runs in its own firmware or in a user-space helper).
    case always
    /// On none: the first frame, even from a camera whose automatic exposure has not settled
    /// (a quicker snap that may come out dark or tinted).
    case never
}

/// Which frames after STREAMON are too early to use: until the camera's automatic adjustments
/// have had at least `frames` frames and `time` to settle, but never longer than `limit` (a dim
/// room slows a webcam to a few frames per second). A camera without such adjustments gets
/// `none`: its first frame is already the finished picture.
struct Warmup: Sendable, Equatable, CustomStringConvertible {
    let frames: Int
    let time: Duration
    let limit: Duration

    static let none = Warmup(frames: 0, time: .zero, limit: .zero)
    /// 150 ms is 4–5 frames at 30 fps: about what a UVC webcam's auto exposure needs to move off
    /// its start value; 3 frames is the floor for a camera that runs slower.
    static let settling = Warmup(frames: 3, time: .milliseconds(150), limit: .seconds(1))

    static func choose(_ mode: CameraWarmupMode, _ adjustments: AutoAdjustments) -> Warmup {
        switch mode {
        case .always: return .settling
        case .never: return .none
        case .auto: return adjustments.any ? .settling : .none
        }
    }

    /// Whether a frame that arrives `elapsed` after STREAMON, with `framesBefore` frames taken
    /// from the driver before it (used, thrown away or damaged), may be used.
    func accepts(framesBefore: Int, elapsed: Duration) -> Bool {
        (framesBefore >= frames && elapsed >= time) || elapsed >= limit
    }

    var description: String {
        self == .none ? "no warm-up" : "warm-up \(frames) frames and \(time.milliseconds) ms"
    }
}
