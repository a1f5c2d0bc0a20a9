import Glibc
import Kit
import Support

/// An MP4Recording whose encoding runs in a short-lived process of its own
/// (`openclaw-node video-encoder`), so FFmpeg and the ~130 libraries it brings are never mapped
/// into the node: when the clip is done the process exits and every page it used goes with it
/// (unloading them in-process leaves ~7 MiB that glibc cannot unload). A codec that crashes
/// takes the recording down, not the node.
///
/// Frames go through a shared memory file: `append` waits until the encoder has taken the
/// previous frame, copies this one in, sends a small message and returns, so the next capture
/// overlaps the encoding. Used by one thread at a time, like every MP4Recording.
final class EncoderProcessRecorder: MP4Recording {
    private let process: Subprocess
    private let toEncoder: Int32
    private let fromEncoder: Int32
    private let frames: SharedMemoryFile
    private let settings: VideoSettings
    private(set) var encoderName = ""
    private(set) var rejectedEncoders: [String] = []
    private(set) var framesEncoded = 0
    private(set) var framesRepeated = 0
    private(set) var byteCount = 0
    private(set) var hasAudioTrack: Bool
    private(set) var audioPacketsWritten = 0
    /// A frame the encoder has not confirmed yet (its pixels are still in shared memory).
    private var awaitingFrame = false
    private var done = false
    /// Checked here, as MP4Recorder does, so a wrong timestamp is an error of the call that made it.
    private var lastTimestampMs: Int64 = -1
    private var framesSent = 0

    /// How long one step of the encoder may take before it is given up for hung.
    static let stepTimeoutMs: Int32 = 30_000

    init(executable: String, settings: VideoSettings, audio: AudioSettings?) throws(MediaError) {
        guard let frames = SharedMemoryFile(name: "openclaw-node-frames") else {
            throw MediaError(.codec, "no shared memory for the video encoder (memfd_create: \(Errno.current.description))")
        }
        self.frames = frames
        self.settings = settings
        hasAudioTrack = audio != nil
        do {
            process = try Subprocess.spawn(executable, [HelperSubcommand.videoEncoder], stdin: .pipe, stdout: .pipe,
                                           stderr: .inherit, extraFDs: [3: frames.fd])
        } catch {
            throw MediaError(.unsupported, "cannot start the video encoder process: \(error.description)")
        }
        toEncoder = process.stdin!.fileDescriptor
        fromEncoder = process.stdout!.fileDescriptor
        var w = EncoderWireWriter()
        w.int(settings.width); w.int(settings.height); w.int(settings.fps); w.int(settings.maxBitrate)
        w.int(settings.crf); w.text(settings.preset)
        w.int(audio == nil ? 0 : 1)
        w.int(audio?.sampleRate ?? 0); w.int(audio?.channels ?? 0); w.int(audio?.bitrate ?? 0)
        w.int(audio?.clipDurationMs ?? -1)
        try EncoderWire.send(toEncoder, .open, w.bytes)
        var r = EncoderWireReader(try expect(.opened))
        do throws(EncoderWireReader.Malformed) {
            encoderName = try r.text()
            rejectedEncoders = try r.text().split(separator: "\n").map(String.init)
        } catch { throw malformed() }
    }

    deinit {
        // A recording given up (cancelled, failed): the encoder goes at once.
        if !done { process.signal(SIGKILL) }
        _ = process.wait()
        process.stdin?.close()
        process.stdout?.close()
    }

    func append(_ image: PixelView, timestampMs: Int64) throws(MediaError) {
        precondition(!done, "append after finish")
        guard timestampMs > lastTimestampMs else { throw MediaError(.codec, "timestamps must increase") }
        try confirmFrame()
        // A 32-bit RGB frame at the output size (a screen) is converted to YUV 4:2:0 on its way
        // into shared memory: 12 bits a pixel to copy instead of 32, and no second pass there.
        let planar = YUV420Converter.handles(image, width: settings.width, height: settings.height)
        let bytes = planar ? image.width * image.height * 3 / 2
                           : image.layout.imageBytes(bytesPerRow: image.bytesPerRow, width: image.width, height: image.height)
        guard frames.reserve(bytes), let base = frames.base?.assumingMemoryBound(to: UInt8.self) else {
            throw MediaError(.codec, "no shared memory for a \(image.width)x\(image.height) frame (\(Errno.current.description))")
        }
        if planar {
            let luma = image.width * image.height
            YUV420Converter.convert(image, y: base, yStride: image.width, u: base + luma, uStride: image.width / 2,
                                    v: base + luma + luma / 4, vStride: image.width / 2)
        } else {
            UnsafeMutableRawPointer(base).copyMemory(from: image.base, byteCount: bytes)
        }
        var w = EncoderWireWriter()
        w.int(timestampMs); w.int(image.width); w.int(image.height); w.int(planar ? image.width : image.bytesPerRow)
        w.int(planar ? EncoderFrameFormat.yuv420 : PixelLayout.allCases.firstIndex(of: image.layout)!); w.int(bytes)
        try EncoderWire.send(toEncoder, .frame, w.bytes)
        awaitingFrame = true
        lastTimestampMs = timestampMs
        framesSent += 1
    }

    func repeatPrevious(timestampMs: Int64) throws(MediaError) {
        precondition(!done, "append after finish")
        guard framesSent > 0 else { return }
        guard timestampMs > lastTimestampMs else { throw MediaError(.codec, "timestamps must increase") }
        lastTimestampMs = timestampMs
        var w = EncoderWireWriter()
        w.int(timestampMs)
        try EncoderWire.send(toEncoder, .repeatFrame, w.bytes)
    }

    func appendAudio(_ chunk: AudioChunk, clipStartNs: UInt64) throws(MediaError) {
        guard hasAudioTrack else { return }
        var w = EncoderWireWriter()
        w.int(Int64(bitPattern: chunk.timestampNs)); w.int(Int64(bitPattern: clipStartNs))
        w.int(chunk.frames); w.int(chunk.channels); w.samples(chunk.samples)
        try EncoderWire.send(toEncoder, .audio, w.bytes)
    }

    func finish(durationMs: Int64) throws(MediaError) -> [UInt8] {
        precondition(!done, "finish twice")
        try confirmFrame()
        var w = EncoderWireWriter()
        w.int(durationMs)
        try EncoderWire.send(toEncoder, .finish, w.bytes)
        while true {
            let (type, body) = try next()
            guard type == .finished else { continue }
            var r = EncoderWireReader(body)
            do throws(EncoderWireReader.Malformed) {
                try readProgress(&r)
                framesRepeated = try r.int()
                audioPacketsWritten = try r.int()
                hasAudioTrack = try r.int() != 0
                let mp4Length = try r.int()
                guard mp4Length >= 0, mp4Length <= body.count else { throw EncoderWireReader.Malformed() }
                done = true
                return Array(body.suffix(mp4Length))
            } catch { throw malformed() }
        }
    }

    /// Waits until the encoder has taken the frame in shared memory (and learns its progress).
    private func confirmFrame() throws(MediaError) {
        while awaitingFrame {
            let (type, body) = try next()
            guard type == .progress else { continue }
            var r = EncoderWireReader(body)
            do throws(EncoderWireReader.Malformed) { try readProgress(&r) } catch { throw malformed() }
            awaitingFrame = false
        }
    }

    private func readProgress(_ r: inout EncoderWireReader) throws(EncoderWireReader.Malformed) {
        byteCount = try r.int()
        framesEncoded = try r.int()
    }

    /// The encoder's next message; its failure as the error it reports.
    private func next() throws(MediaError) -> (EncoderMessage, [UInt8]) {
        let (type, body) = try EncoderWire.receive(fromEncoder, timeoutMs: Self.stepTimeoutMs)
        if type == .failed {
            var r = EncoderWireReader(body)
            let kind = (try? r.int()).flatMap { [MediaError.Kind.unsupported, .codec, .tooLarge].indices.contains($0) ? $0 : nil } ?? 1
            let message = (try? r.text()) ?? "the video encoder failed"
            throw MediaError([MediaError.Kind.unsupported, .codec, .tooLarge][kind], message)
        }
        return (type, body)
    }

    private func expect(_ wanted: EncoderMessage) throws(MediaError) -> [UInt8] {
        let (type, body) = try next()
        guard type == wanted else { throw malformed() }
        return body
    }

    private func malformed() -> MediaError { MediaError(.codec, "the video encoder process sent a malformed message") }
}
