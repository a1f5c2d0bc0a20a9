import Glibc

/// What the H.264 encoder is asked for.
public struct VideoSettings: Sendable, Equatable {
    /// Output size; H.264 4:2:0 needs even numbers (use `ImageSize.evenScaled`).
    public var width: Int
    public var height: Int
    /// Nominal frame rate (rate control and keyframe spacing); timestamps come from the caller.
    public var fps: Int
    /// Peak bitrate in bits/s (x264 VBV cap; other encoders use 80% of it as their target).
    public var maxBitrate: Int
    /// Constant-quality factor under the cap (x264 CRF; lower is better).
    public var crf: Int = 23
    /// x264 speed preset: screen content needs little motion search, so a fast preset is enough.
    public var preset: String = "veryfast"

    public init(width: Int, height: Int, fps: Int, maxBitrate: Int) {
        self.width = width; self.height = height; self.fps = fps; self.maxBitrate = maxBitrate
    }
}

/// What the AAC encoder is asked for; rate and channels are what the microphone delivers.
public struct AudioSettings: Sendable, Equatable {
    public var sampleRate: Int
    public var channels: Int
    /// bits/s; 64 kbit/s per channel is plenty for speech and keeps the payload small.
    public var bitrate: Int
    /// Audio past this point of the clip is dropped, so a late chunk cannot outlast the video.
    public var clipDurationMs: Int64?

    /// The rates an AAC stream can carry (MPEG-4 sampling frequency index).
    public static let aacSampleRates: Set<Int> = [96_000, 88_200, 64_000, 48_000, 44_100, 32_000, 24_000, 22_050,
                                                  16_000, 12_000, 11_025, 8_000, 7_350]

    public init(sampleRate: Int, channels: Int, bitrate: Int? = nil, clipDurationMs: Int64? = nil) {
        self.sampleRate = sampleRate
        self.channels = channels
        self.bitrate = bitrate ?? 64_000 * channels
        self.clipDurationMs = clipDurationMs
    }
}
