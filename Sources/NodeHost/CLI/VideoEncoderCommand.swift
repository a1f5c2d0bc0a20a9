import Kit

/// `openclaw-node video-encoder` (hidden from help): the short-lived process a clip or screen
/// recording is encoded in. The node starts it for each recording (Media's EncoderProcessRecorder)
/// and talks to it over its standard input and output; this loads the video library, whose
/// encoder does the rest, so FFmpeg is mapped in this process only, never in the node's.
enum VideoEncoderCommand {
    static func main(_ args: [String]) -> Int32 {
        guard case .success(let exports) = BundleLoader.load("video"), let entry = exports.service as? any HelperProcessEntry else {
            Out.err("openclaw-node \(HelperSubcommand.videoEncoder): libopenclaw-video.so is missing or broken; run openclaw-node doctor")
            return ExitCode.failure.rawValue
        }
        return entry.helperMain(args)
    }
}
