import Config
import Glibc
import Kit
import Support

/// An H.264 (+ AAC) recorder that builds an MP4 in memory. The implementation (FFmpeg's libavcodec
/// and libavformat, ~130 shared libraries with their codecs) lives in libopenclaw-video.so, which
/// the node's encoder process loads for each clip or recording, so the node itself never maps it.
public protocol MP4Recording: AnyObject {
    /// The libavcodec encoder in use ("libx264" on Debian, "h264_v4l2m2m" where that hardware opens).
    var encoderName: String { get }
    /// Encoders tried before it and why each was passed over ("h264_v4l2m2m: does not open: …").
    var rejectedEncoders: [String] { get }
    var framesEncoded: Int { get }
    /// Of `framesEncoded`, the repeats written as skip frames without the encoder.
    var framesRepeated: Int { get }
    /// Bytes of MP4 written so far.
    var byteCount: Int { get }
    var hasAudioTrack: Bool { get }
    var audioPacketsWritten: Int { get }
    /// Encodes one frame stamped `timestampMs` after the clip's start.
    func append(_ image: PixelView, timestampMs: Int64) throws(MediaError)
    /// Encodes the previous frame's picture again, shown from `timestampMs`: for a screen that did
    /// not change, without capturing or converting it. Before any frame, does nothing.
    func repeatPrevious(timestampMs: Int64) throws(MediaError)
    /// Adds microphone audio stamped on the same monotonic clock as the clip's start.
    func appendAudio(_ chunk: AudioChunk, clipStartNs: UInt64) throws(MediaError)
    /// Flushes the encoders and returns the whole MP4.
    func finish(durationMs: Int64) throws(MediaError) -> [UInt8]
}

/// What libopenclaw-video.so exports (as `BundleExports.service`).
public protocol MP4RecorderFactory: Sendable {
    func recorder(settings: VideoSettings, audio: AudioSettings?) throws(MediaError) -> any MP4Recording
    /// Opens the codec libraries (and lets them go again after the idle period): doctor's check.
    func checkLibraries() throws(MediaError)
}

public enum VideoEncoding {
    /// A new recorder; loads the video library on first use (once per process).
    /// The codec libraries are opened for the recorder and closed again once no recorder has
    /// existed for `IdleLibraryRelease.after`; the video library itself stays loaded.
    /// Where the openclaw-node executable is known (the node itself, a test runner beside it), the
    /// recorder runs in an encoder process of its own (EncoderProcessRecorder), so the node never
    /// maps FFmpeg; elsewhere in this process.
    public static func recorder(settings: VideoSettings, audio: AudioSettings? = nil) throws(MediaError) -> any MP4Recording {
        if let executable = NodeExecutable.path {
            return try EncoderProcessRecorder(executable: executable, settings: settings, audio: audio)
        }
        return try factory().recorder(settings: settings, audio: audio)
    }

    /// Whether recording can work here: the video library and FFmpeg's libraries load.
    public static func checkLibraries() throws(MediaError) { try factory().checkLibraries() }

    /// For doctor: the encoder a recording gets here (a small one is opened to find out) and the
    /// ones passed over, as "libx264; not used: h264_v4l2m2m: does not open: No such device".
    public static func encoderReport() throws(MediaError) -> String {
        let probe = try recorder(settings: VideoSettings(width: 64, height: 64, fps: 10, maxBitrate: 500_000))
        let rejected = probe.rejectedEncoders
        return probe.encoderName + (rejected.isEmpty ? "" : "; not used: " + rejected.joined(separator: "; "))
    }

    private static func factory() throws(MediaError) -> any MP4RecorderFactory {
        switch BundleLoader.load("video") {
        case .success(let exports):
            guard let factory = exports.service as? any MP4RecorderFactory else {
                throw MediaError(.unsupported, "libopenclaw-video.so provides no MP4 recorder")
            }
            return factory
        case .failure(let f):
            throw MediaError(.unsupported, "video recording is not available: \(f.description)")
        }
    }
}
