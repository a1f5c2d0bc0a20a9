import Config
import Kit
import Media
import Support

/// Size and bitrate for a recording so the MP4 fits the gateway's maxPayload: the peak bitrate is
/// capped by the byte budget over the clip's length, and when that cap is too low for the screen
/// size at this frame rate the video is scaled down rather than turned to mush.
struct RecordPlan: Equatable {
    let video: VideoSettings
    /// Largest MP4 (raw bytes) whose base64 fits the payload.
    let maxBytes: Int

    /// Widest output: 4K screens are halved, which keeps encoding real-time on small machines.
    static let maxWidth = 1920
    static let minWidth = 160
    static let maxBitrate = 8_000_000
    /// Bits per pixel per frame below which screen text gets unreadable; under it we shrink instead.
    static let minBitsPerPixel = 0.02

    /// `audioBitrate` is taken off the video's share when the clip carries a microphone track.
    static func make(sourceWidth: Int, sourceHeight: Int, fps: Int, durationMs: Int,
                     maxPayloadBytes: Int, audioBitrate: Int = 0) throws(NodeError) -> RecordPlan {
        let maxBytes = PayloadBudget(maxPayloadBytes: maxPayloadBytes).mediaBytes
        guard maxBytes >= 16 * 1024 else {
            throw ScreenError.tooLarge("the gateway accepts only \(maxPayloadBytes) bytes per result; no recording fits")
        }
        // One extra second covers the VBV buffer and the MP4 index.
        let seconds = Double(durationMs) / 1000 + 1
        let cap = max(1, Int(clamping: Double(maxBytes) * 8 / seconds * 0.85, to: 0...Int(Int32.max)) - audioBitrate)
        let bitrate = min(maxBitrate, cap)

        let fitted = ImageSize.fitting(width: sourceWidth, height: sourceHeight, maxWidth: maxWidth)
        var factor = Double(fitted.width) / Double(sourceWidth)
        let needed = Double(fitted.width * fitted.height * fps) * minBitsPerPixel
        if Double(bitrate) < needed { factor *= (Double(bitrate) / needed).squareRoot() }
        factor = max(factor, min(1, Double(minWidth) / Double(sourceWidth)))
        let size = ImageSize.evenScaled(width: sourceWidth, height: sourceHeight, factor: factor)
        return RecordPlan(video: VideoSettings(width: size.width, height: size.height, fps: fps, maxBitrate: bitrate),
                          maxBytes: maxBytes)
    }
}
