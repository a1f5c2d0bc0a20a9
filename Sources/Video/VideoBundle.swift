import CBundleABI
import Config
import Kit
import Media

/// libopenclaw-video.so: the MP4 recorder behind Media's `VideoEncoding`, loaded by the node's
/// video encoder process (`openclaw-node video-encoder`) for each camera.clip or screen.record.
@_cdecl("openclaw_node_bundle_video")
public func openclawNodeBundle(_ out: UnsafeMutablePointer<openclaw_node_bundle_info>) {
    openclaw_node_bundle_describe(out, "video") {
        BundleExports(service: FFmpegRecorderFactory()).retainedPointer()
    }
}

struct FFmpegRecorderFactory: MP4RecorderFactory, HelperProcessEntry {
    func recorder(settings: VideoSettings, audio: AudioSettings?) throws(MediaError) -> any MP4Recording {
        try MP4Recorder(settings: settings, audio: audio)
    }

    func checkLibraries() throws(MediaError) { _ = try FFmpegLibraries.lease() }

    /// `openclaw-node video-encoder`: the encoder process of VideoEncoding's recorders.
    func helperMain(_ arguments: [String]) -> Int32 { EncoderProcessServer.serve() }
}
