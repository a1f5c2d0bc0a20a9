import CFFmpeg
import Glibc
import Media
import Support

/// Encodes raw frames to H.264 and muxes them into an MP4 held in memory. Frames carry their own
/// timestamps in milliseconds (the caller paces them with a monotonic clock and may skip slots),
/// so the clip's duration is real time even when frames are dropped. With `audio` settings it also
/// carries an AAC track from microphone chunks stamped on the same monotonic clock; the muxer
/// interleaves both by timestamp. Used by one thread at a time; every FFmpeg object here is owned
/// by this instance (or its AACTrack) and freed in deinit. FFmpeg's libraries are leased for the
/// recorder's life (FFmpegLibraries), so their idle period starts when the last recorder is gone.
final class MP4Recorder: MP4Recording {
    public let settings: VideoSettings
    /// The libavcodec encoder in use ("libx264" on Debian, "h264_v4l2m2m" where that hardware opens).
    public private(set) var encoderName = ""
    /// Encoders tried before it and why they were passed over ("h264_v4l2m2m: does not open: …").
    public private(set) var rejectedEncoders: [String] = []
    public private(set) var framesEncoded = 0
    /// Frames that repeat the previous picture without the encoder (H264FrameRepeater).
    public private(set) var framesRepeated = 0

    private let lease: IdleReleased<FFmpegLibraries, DynamicLibrary.Failure>.Lease
    private let ff: FFmpegLibraries
    private let sink: MemorySink
    private var format: UnsafeMutablePointer<AVFormatContext>?
    private var codec: UnsafeMutablePointer<AVCodecContext>?
    /// Owned by `format`. Implicitly unwrapped so the object is whole (and deinit frees what
    /// exists) as soon as the sink exists, whatever fails after that.
    private var stream: UnsafeMutablePointer<AVStream>!
    private var frame: UnsafeMutablePointer<AVFrame>?
    private var packet: UnsafeMutablePointer<AVPacket>?
    /// The newest packet, written once the next one tells its duration (or at finish).
    private var held: UnsafeMutablePointer<AVPacket>?
    /// A repeat's packet while it is made (the encoder's stays in `packet`).
    private var repeatPacket: UnsafeMutablePointer<AVPacket>?
    private var holding = false
    private let scaler = ImageScaler(filter: .bilinear)
    private var lastTimestampMs: Int64 = -1
    private var finished = false
    /// The audio track, when one was asked for.
    private var audio: AACTrack?
    /// Writes repeated pictures itself when the encoder's stream allows it (libx264 does).
    private var repeater: H264FrameRepeater?
    /// Timestamps of repeats waiting for the encoder's packet of the frame before them.
    private var pendingRepeats: [Int64] = []

    /// `encoders` are tried in order (H264Encoders); the first that opens is used.
    public init(settings: VideoSettings, audio audioSettings: AudioSettings? = nil,
                encoders: [String] = H264Encoders.preference) throws(MediaError) {
        guard settings.width >= 2, settings.height >= 2, settings.width % 2 == 0, settings.height % 2 == 0 else {
            throw MediaError(.unsupported, "video size \(settings.width)x\(settings.height) must be even")
        }
        self.settings = settings
        lease = try FFmpegLibraries.lease()
        let ff = lease.resource
        self.ff = ff
        ff.av_log_set_level(AV_LOG_ERROR)
        sink = try MemorySink(ff)

        var fmt: UnsafeMutablePointer<AVFormatContext>? = nil
        let rc = ff.avformat_alloc_output_context2(&fmt, nil, "mp4", nil)
        guard rc >= 0, let fmt else { throw ff.error("MP4 muxer", rc) }
        format = fmt
        guard let st = ff.avformat_new_stream(fmt, nil) else { throw MediaError(.codec, "avformat_new_stream failed") }
        stream = st
        let globalHeader = fmt.pointee.oformat.pointee.flags & cff_fmt_global_header() != 0
        let chosen = try H264Encoders.open(encoders, ff) { ctx, name in
            MP4Recorder.configure(ctx, encoder: name, settings, globalHeader: globalHeader, ff)
        }
        codec = chosen.context
        encoderName = chosen.name
        rejectedEncoders = chosen.rejected
        let ctx = chosen.context
        var open = ff.avcodec_parameters_from_context(st.pointee.codecpar, ctx)
        guard open >= 0 else { throw ff.error("stream parameters", open) }
        try addRepeater(st.pointee.codecpar)
        st.pointee.time_base = ctx.pointee.time_base
        // Every stream must exist (with its codec parameters) before the header is written.
        if let audioSettings { audio = try AACTrack(format: fmt, settings: audioSettings, ff) }

        fmt.pointee.pb = sink.context
        fmt.pointee.flags |= AVFMT_FLAG_CUSTOM_IO
        open = ff.avformat_write_header(fmt, nil)
        guard open >= 0 else { throw ff.error("writing the MP4 header", open) }

        guard let f = ff.av_frame_alloc() else { throw MediaError(.codec, "out of memory") }
        frame = f
        f.pointee.format = AV_PIX_FMT_YUV420P.rawValue
        f.pointee.width = Int32(settings.width)
        f.pointee.height = Int32(settings.height)
        open = ff.av_frame_get_buffer(f, 0)
        guard open >= 0 else { throw ff.error("frame buffer", open) }
        packet = ff.av_packet_alloc()
        held = ff.av_packet_alloc()
        repeatPacket = ff.av_packet_alloc()
        guard packet != nil, held != nil, repeatPacket != nil else { throw MediaError(.codec, "out of memory") }
    }

    /// The encoder options, set before it opens (again for each encoder tried).
    private static func configure(_ ctx: UnsafeMutablePointer<AVCodecContext>, encoder encoderName: String,
                                  _ settings: VideoSettings, globalHeader: Bool, _ ff: FFmpegLibraries) {
        ctx.pointee.width = Int32(settings.width)
        ctx.pointee.height = Int32(settings.height)
        ctx.pointee.pix_fmt = AV_PIX_FMT_YUV420P
        ctx.pointee.time_base = AVRational(num: 1, den: 1000)
        ctx.pointee.framerate = AVRational(num: Int32(settings.fps), den: 1)
        // A keyframe every 10 s: a still screen costs a whole frame per keyframe, and the payload
        // budget matters more than fast seeking in a clip of at most a minute.
        ctx.pointee.gop_size = Int32(max(1, settings.fps * 10))
        // No B-frames: packets leave in presentation order, so each one's duration is known exactly.
        ctx.pointee.max_b_frames = 0
        // Encoder threads as the machine allows (libavcodec's default is one), so 1080p stays real-time.
        ctx.pointee.thread_count = 0
        ctx.pointee.rc_max_rate = Int64(settings.maxBitrate)
        ctx.pointee.rc_buffer_size = Int32(clamping: settings.maxBitrate)
        if encoderName != "libx264" { ctx.pointee.bit_rate = Int64(settings.maxBitrate) * 8 / 10 }
        if globalHeader { ctx.pointee.flags |= cff_codec_flag_global_header() }
        if encoderName == "libx264" {
            _ = ff.av_opt_set(ctx.pointee.priv_data, "preset", settings.preset, 0)
            _ = ff.av_opt_set(ctx.pointee.priv_data, "crf", String(settings.crf), 0)
        }
    }

    deinit {
        ff.av_packet_free(&packet)
        ff.av_packet_free(&held)
        ff.av_packet_free(&repeatPacket)
        ff.av_frame_free(&frame)
        ff.avcodec_free_context(&codec)
        // Custom I/O: freeing the format context leaves the sink's AVIOContext to the sink.
        ff.avformat_free_context(format)
    }

    /// Bytes of MP4 produced so far (the encoder still holds a few frames).
    public var byteCount: Int { sink.count }

    public var hasAudioTrack: Bool { audio != nil }

    /// AAC packets handed to the muxer: hasAudio means this is above zero after `finish`.
    public var audioPacketsWritten: Int { audio?.packetsWritten ?? 0 }

    /// Adds microphone audio. `clipStartNs` is the CLOCK_MONOTONIC time of video timestamp 0, so
    /// the chunk lands at the same point of the clip as the frames captured with it. Audio before
    /// the start or past `AudioSettings.clipDurationMs` is dropped. Ignored without an audio track.
    public func appendAudio(_ chunk: AudioChunk, clipStartNs: UInt64) throws(MediaError) {
        precondition(!finished, "append after finish")
        guard let audio else { return }
        let offsetNs = Int64(bitPattern: chunk.timestampNs &- clipStartNs)
        let startSample = offsetNs * Int64(audio.settings.sampleRate) / 1_000_000_000
        try audio.append(chunk, startSample: startSample, write: writeAudio)
    }

    /// Converts `image` (any layout, any size: it is scaled to the output size) and encodes it
    /// as the frame shown from `timestampMs` on. Timestamps must increase.
    public func append(_ image: PixelView, timestampMs: Int64) throws(MediaError) {
        try advance(to: timestampMs)
        try writableFrame()
        try scaler.convert(image, into: frame!)
        try send(timestampMs: timestampMs)
    }

    /// Encodes a picture already in YUV 4:2:0 at the output size (the encoder process's frames,
    /// converted by the node as it copied them into shared memory): the planes are copied in.
    public func appendYUV420(y: UnsafeRawPointer, u: UnsafeRawPointer, v: UnsafeRawPointer,
                             timestampMs: Int64) throws(MediaError) {
        try advance(to: timestampMs)
        try writableFrame()
        let f = frame!.pointee
        guard let dy = f.data.0, let du = f.data.1, let dv = f.data.2 else { throw MediaError(.codec, "the frame has no planes") }
        let w = settings.width, h = settings.height
        for (dst, stride, source, width, rows) in [(dy, f.linesize.0, y, w, h), (du, f.linesize.1, u, w / 2, h / 2),
                                                   (dv, f.linesize.2, v, w / 2, h / 2)] {
            for row in 0..<rows {
                (dst + row * Int(stride)).update(from: (source + row * width).assumingMemoryBound(to: UInt8.self), count: width)
            }
        }
        try send(timestampMs: timestampMs)
    }

    /// A skip frame written without the encoder where the stream allows it (it waits for the
    /// encoder's packet of the frame before it); otherwise the frame buffer sent again as it is
    /// (nothing writes to it until the next `append` makes it writable).
    public func repeatPrevious(timestampMs: Int64) throws(MediaError) {
        guard framesEncoded > 0 else { precondition(!finished, "append after finish"); return }
        try advance(to: timestampMs)
        if repeater != nil {
            pendingRepeats.append(timestampMs)
            framesRepeated += 1
            framesEncoded += 1
        } else {
            try send(timestampMs: timestampMs)
        }
    }

    /// The next frame's timestamp, after the previous one.
    private func advance(to timestampMs: Int64) throws(MediaError) {
        precondition(!finished, "append after finish")
        guard timestampMs > lastTimestampMs else { throw MediaError(.codec, "timestamps must increase") }
        lastTimestampMs = timestampMs
    }

    /// The encoder may still reference the previous picture; a private buffer if so.
    private func writableFrame() throws(MediaError) {
        let rc = ff.av_frame_make_writable(frame)
        guard rc >= 0 else { throw ff.error("frame buffer", rc) }
    }

    private func send(timestampMs: Int64) throws(MediaError) {
        frame!.pointee.pts = timestampMs
        let rc = ff.avcodec_send_frame(codec, frame)
        guard rc >= 0 else { throw ff.error("encoding a frame", rc) }
        framesEncoded += 1
        try drain()
    }

    /// Flushes the encoder, ends the last frame at `durationMs` and returns the complete MP4.
    public func finish(durationMs: Int64) throws(MediaError) -> [UInt8] {
        precondition(!finished, "finish twice")
        finished = true
        let rc = ff.avcodec_send_frame(codec, nil)
        guard rc >= 0 else { throw ff.error("flushing the encoder", rc) }
        try drain()
        try writeRepeats(before: .max)
        if holding {
            held!.pointee.duration = max(1, durationMs - held!.pointee.pts)
            try write(held!)
            holding = false
        }
        try audio?.finish(write: writeAudio)
        let t = ff.av_write_trailer(format)
        guard t >= 0 else { throw ff.error("writing the MP4 index", t) }
        return sink.bytes
    }

    private func drain() throws(MediaError) {
        while true {
            let rc = ff.avcodec_receive_packet(codec, packet)
            if rc == cff_averror_eagain() || rc == cff_averror_eof() { return }
            guard rc >= 0 else { throw ff.error("encoding", rc) }
            try writeRepeats(before: packet!.pointee.pts)
            if let repeater, let data = packet!.pointee.data {
                if let renumbered = repeater.follow(UnsafeBufferPointer(start: data, count: Int(packet!.pointee.size))) {
                    try replaceData(of: packet!, with: renumbered)
                }
            }
            try hold(packet!)
        }
    }

    /// Writes the held packet, now that `next` tells its duration, and holds `next` (its data moves).
    private func hold(_ next: UnsafeMutablePointer<AVPacket>) throws(MediaError) {
        if holding {
            held!.pointee.duration = max(1, next.pointee.pts - held!.pointee.pts)
            try write(held!)
        }
        ff.av_packet_move_ref(held, next)
        holding = true
    }

    /// The repeats stamped before `pts`, which follow the encoder's packet written last.
    private func writeRepeats(before pts: Int64) throws(MediaError) {
        guard let repeater, !pendingRepeats.isEmpty else { return }
        while let ts = pendingRepeats.first, ts < pts {
            pendingRepeats.removeFirst()
            let p = repeatPacket!
            try replaceData(of: p, with: repeater.repeatFrame())
            p.pointee.pts = ts
            p.pointee.dts = ts
            p.pointee.flags = 0
            try hold(p)
        }
    }

    /// Gives `p` new data, keeping its timestamps and flags.
    private func replaceData(of p: UnsafeMutablePointer<AVPacket>, with bytes: [UInt8]) throws(MediaError) {
        let (pts, dts, flags) = (p.pointee.pts, p.pointee.dts, p.pointee.flags)
        ff.av_packet_unref(p)
        let rc = ff.av_new_packet(p, Int32(bytes.count))
        guard rc >= 0 else { throw ff.error("packet", rc) }
        bytes.withUnsafeBufferPointer { p.pointee.data.update(from: $0.baseAddress!, count: bytes.count) }
        p.pointee.pts = pts; p.pointee.dts = dts; p.pointee.flags = flags
    }

    /// Sets up the repeater when the encoder's header is Annex B parameter sets it can follow, and
    /// adds its parameter set to the stream's header (which avformat_write_header turns into avcC).
    private func addRepeater(_ par: UnsafeMutablePointer<AVCodecParameters>) throws(MediaError) {
        guard let data = par.pointee.extradata, par.pointee.extradata_size > 4 else { return }
        let header = Array(UnsafeBufferPointer(start: data, count: Int(par.pointee.extradata_size)))
        guard header.starts(with: [0, 0, 1]) || header.starts(with: [0, 0, 0, 1]),
              let r = H264FrameRepeater(extradata: header) else { return }
        let combined = header + r.parameterSet
        // FFmpeg reads past the end of headers: they carry AV_INPUT_BUFFER_PADDING_SIZE zero bytes.
        let padding = Int(AV_INPUT_BUFFER_PADDING_SIZE)
        guard let buffer = ff.av_malloc(combined.count + padding)?.assumingMemoryBound(to: UInt8.self) else {
            throw MediaError(.codec, "out of memory")
        }
        buffer.initialize(repeating: 0, count: combined.count + padding)
        combined.withUnsafeBufferPointer { buffer.update(from: $0.baseAddress!, count: combined.count) }
        ff.av_free(par.pointee.extradata)
        par.pointee.extradata = buffer
        par.pointee.extradata_size = Int32(combined.count)
        repeater = r
    }

    /// Hands one packet (timestamps in ms) to the muxer, which takes its data.
    private func write(_ p: UnsafeMutablePointer<AVPacket>) throws(MediaError) {
        ff.av_packet_rescale_ts(p, codec!.pointee.time_base, stream.pointee.time_base)
        p.pointee.stream_index = stream.pointee.index
        let rc = ff.av_interleaved_write_frame(format, p)
        guard rc >= 0 else { throw ff.error("muxing", rc) }
    }

    /// The same for an AAC packet (timestamps in samples).
    private func writeAudio(_ p: UnsafeMutablePointer<AVPacket>) throws(MediaError) {
        let track = audio!
        ff.av_packet_rescale_ts(p, track.codecTimeBase, track.stream.pointee.time_base)
        p.pointee.stream_index = track.stream.pointee.index
        let rc = ff.av_interleaved_write_frame(format, p)
        guard rc >= 0 else { throw ff.error("muxing audio", rc) }
    }
}
