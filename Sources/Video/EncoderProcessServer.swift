import Glibc
import Media
import Support

/// The `openclaw-node video-encoder` process (EncoderProcessRecorder's other end): reads the
/// recording's settings, frames and audio from standard input (pixels in the shared memory file
/// on descriptor 3), encodes them with MP4Recorder and answers on standard output. It ends after
/// the MP4 is sent, on a failure (sent as such), or when the node goes away (end of input).
enum EncoderProcessServer {
    static func serve() -> Int32 {
        let input: Int32 = 0, output: Int32 = 1
        let frames = SharedMemoryFile(adopting: 3)
        var recorder: MP4Recorder?
        do throws(MediaError) {
            while true {
                let (type, body) = try EncoderWire.receive(input)
                var r = EncoderWireReader(body)
                switch type {
                case .open:
                    let opened = try open(&r)
                    recorder = opened
                    var w = EncoderWireWriter()
                    w.text(opened.encoderName); w.text(opened.rejectedEncoders.joined(separator: "\n"))
                    try EncoderWire.send(output, .opened, w.bytes)
                case .frame:
                    guard let recorder else { throw outOfOrder() }
                    switch try frame(&r, in: frames, output: recorder.settings) {
                    case .packed(let timestampMs, let view): try recorder.append(view, timestampMs: timestampMs)
                    case .yuv420(let timestampMs, let base):
                        let luma = recorder.settings.width * recorder.settings.height
                        try recorder.appendYUV420(y: base, u: base + luma, v: base + luma + luma / 4, timestampMs: timestampMs)
                    }
                    try EncoderWire.send(output, .progress, progress(recorder).bytes)
                case .repeatFrame:
                    guard let recorder else { throw outOfOrder() }
                    try recorder.repeatPrevious(timestampMs: try field { () throws(EncoderWireReader.Malformed) in try r.int64() })
                case .audio:
                    guard let recorder else { throw outOfOrder() }
                    let (chunk, clipStartNs) = try field { () throws(EncoderWireReader.Malformed) in
                        let ts = UInt64(bitPattern: try r.int64()), start = UInt64(bitPattern: try r.int64())
                        let count = try r.int(), channels = try r.int()
                        return (AudioChunk(samples: try r.samples(), frames: count, channels: channels, timestampNs: ts), start)
                    }
                    try recorder.appendAudio(chunk, clipStartNs: clipStartNs)
                case .finish:
                    guard let recorder else { throw outOfOrder() }
                    let mp4 = try recorder.finish(durationMs: try field { () throws(EncoderWireReader.Malformed) in try r.int64() })
                    var w = progress(recorder)
                    w.int(recorder.framesRepeated); w.int(recorder.audioPacketsWritten); w.int(recorder.hasAudioTrack ? 1 : 0)
                    w.int(mp4.count)
                    try EncoderWire.send(output, .finished, w.bytes + mp4)
                    return 0
                case .opened, .progress, .finished, .failed:
                    throw outOfOrder()
                }
            }
        } catch {
            var w = EncoderWireWriter()
            w.int([MediaError.Kind.unsupported, .codec, .tooLarge].firstIndex(of: error.kind) ?? 1)
            w.text(error.description)
            try? EncoderWire.send(output, .failed, w.bytes)
            return 1
        }
    }

    private static func open(_ r: inout EncoderWireReader) throws(MediaError) -> MP4Recorder {
        let (video, audio) = try field { () throws(EncoderWireReader.Malformed) -> (VideoSettings, AudioSettings?) in
            var v = VideoSettings(width: try r.int(), height: try r.int(), fps: try r.int(), maxBitrate: try r.int())
            v.crf = try r.int()
            v.preset = try r.text()
            let hasAudio = try r.int() != 0
            let rate = try r.int(), channels = try r.int(), bitrate = try r.int(), clipMs = try r.int64()
            return (v, hasAudio ? AudioSettings(sampleRate: rate, channels: channels, bitrate: bitrate,
                                                clipDurationMs: clipMs < 0 ? nil : clipMs) : nil)
        }
        return try MP4Recorder(settings: video, audio: audio)
    }

    enum Frame {
        case packed(Int64, PixelView)
        /// Planar YUV 4:2:0 at the output size, from the start of the mapping.
        case yuv420(Int64, UnsafeRawPointer)
    }

    private static func frame(_ r: inout EncoderWireReader, in frames: SharedMemoryFile, output: VideoSettings) throws(MediaError) -> Frame {
        let (ts, width, height, stride, layoutIndex, bytes) = try field { () throws(EncoderWireReader.Malformed) in
            (try r.int64(), try r.int(), try r.int(), try r.int(), try r.int(), try r.int())
        }
        if layoutIndex == EncoderFrameFormat.yuv420 {
            guard width == output.width, height == output.height, bytes == width * height * 3 / 2,
                  frames.map(bytes), let base = frames.base else { throw malformed() }
            return .yuv420(ts, UnsafeRawPointer(base))
        }
        guard PixelLayout.allCases.indices.contains(layoutIndex), width > 0, height > 0 else { throw malformed() }
        let layout = PixelLayout.allCases[layoutIndex]
        guard stride >= width * layout.bytesPerPixel,
              bytes == layout.imageBytes(bytesPerRow: stride, width: width, height: height),
              frames.map(bytes), let base = frames.base else { throw malformed() }
        return .packed(ts, PixelView(base: UnsafeRawPointer(base), width: width, height: height, bytesPerRow: stride, layout: layout))
    }

    private static func progress(_ recorder: MP4Recorder) -> EncoderWireWriter {
        var w = EncoderWireWriter()
        w.int(recorder.byteCount); w.int(recorder.framesEncoded)
        return w
    }

    private static func field<T>(_ read: () throws(EncoderWireReader.Malformed) -> T) throws(MediaError) -> T {
        do { return try read() } catch { throw malformed() }
    }

    private static func malformed() -> MediaError { MediaError(.codec, "the node sent the video encoder a malformed message") }
    private static func outOfOrder() -> MediaError { MediaError(.codec, "the node sent the video encoder a message out of order") }
}
