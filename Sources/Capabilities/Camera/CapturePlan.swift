/// Which format and frame size to ask the device for, given what it offers and the width the
/// caller wants. The smallest size at least `maxWidth` wide keeps detail and avoids decoding more
/// pixels than needed; when no scaling is left to do, MJPEG frames go out as they are.
struct CapturePlan: Sendable, Equatable {
    let format: CameraPixelFormat
    let size: FrameSize

    static func choose(_ formats: [CameraPixelFormat: [FrameSize]], maxWidth: Int) -> CapturePlan? {
        let sizes = Set(formats.values.joined()).sorted { $0.width * $0.height < $1.width * $1.height }
        guard let largest = sizes.last else { return nil }
        let size = sizes.first { $0.width >= maxWidth } ?? largest
        let offers = { (f: CameraPixelFormat) in formats[f]?.contains(size) == true }
        let needsScaling = size.width > maxWidth
        // Passthrough when the size is final; otherwise raw frames scale without a JPEG decode.
        let order: [CameraPixelFormat] = needsScaling ? [.yuyv, .nv12, .mjpeg] : [.mjpeg, .yuyv, .nv12]
        guard let format = order.first(where: offers) else { return nil }
        return CapturePlan(format: format, size: size)
    }
}
