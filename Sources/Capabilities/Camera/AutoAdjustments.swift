import CV4L2
import Glibc

/// The adjustments a camera makes by itself from what it sees — automatic exposure, gain and
/// white balance — as its V4L2 controls report them. These need the first frames after STREAMON
/// to settle (a webcam's first frames come out dark or tinted); a camera with none of them running
/// (no such controls, or all set to manual) gives its finished picture from the first frame.
struct AutoAdjustments: Sendable, Equatable, CustomStringConvertible {
    var exposure = false
    var gain = false
    var whiteBalance = false

    static let none = AutoAdjustments()

    var any: Bool { exposure || gain || whiteBalance }

    var description: String {
        var on: [String] = []
        if exposure { on.append("exposure") }
        if gain { on.append("gain") }
        if whiteBalance { on.append("white balance") }
        return on.isEmpty ? "no auto adjustments" : "auto " + on.joined(separator: ", ")
    }
}

extension V4L2Device {
    /// VIDIOC_QUERYCTRL and VIDIOC_G_CTRL on the three controls: a few ioctls, no frames.
    func autoAdjustments() -> AutoAdjustments {
        AutoAdjustments(exposure: isAutomatic(cv4l2_cid_exposure_auto(), manual: cv4l2_exposure_manual()),
                        gain: isAutomatic(cv4l2_cid_autogain(), manual: 0),
                        whiteBalance: isAutomatic(cv4l2_cid_auto_white_balance(), manual: 0))
    }

    /// Whether control `id` exists, is enabled and is not at its manual value. One that exists but
    /// cannot be read counts as automatic: a needless warm-up costs a few frames, a missing one a
    /// dark photo.
    private func isAutomatic(_ id: UInt32, manual: Int32) -> Bool {
        var q = v4l2_queryctrl()
        q.id = id
        guard cv4l2_queryctrl(fd, &q) == 0, q.flags & UInt32(V4L2_CTRL_FLAG_DISABLED) == 0 else { return false }
        var c = v4l2_control()
        c.id = id
        guard cv4l2_g_ctrl(fd, &c) == 0 else { return true }
        return c.value != manual
    }
}
