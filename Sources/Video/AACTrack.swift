import CFFmpeg
import Media

/// The audio track of an MP4Recorder: FFmpeg's native "aac" encoder fed planar float converted
/// from the microphone's S16, placed on the clip's timeline by timestamp (gaps become silence,
/// overlaps and audio before the clip's start are dropped). Owns its codec context, frame and
/// packet; the stream belongs to the recorder's format context.
final class AACTrack {
    let settings: AudioSettings
    /// The recorder's libraries (a copy keeps them open until this track is gone).
    private let ff: FFmpegLibraries
    private(set) var stream: UnsafeMutablePointer<AVStream>!
    private(set) var packetsWritten = 0
    private var codec: UnsafeMutablePointer<AVCodecContext>?
    private var frame: UnsafeMutablePointer<AVFrame>?
    private var packet: UnsafeMutablePointer<AVPacket>?
    private var frameSize = 1024
    /// Samples per channel not yet encoded; the first one sits at `pendingPts` (in samples).
    private var pending: [[Float]] = []
    private var pendingPts: Int64 = 0
    private var limit: Int64 = .max

    /// Timestamp jitter under this (20 ms) is ignored rather than patched with silence or cuts.
    private var tolerance: Int64 { Int64(settings.sampleRate / 50) }

    init(format: UnsafeMutablePointer<AVFormatContext>, settings: AudioSettings, _ ff: FFmpegLibraries) throws(MediaError) {
        self.settings = settings
        self.ff = ff
        guard settings.channels >= 1, settings.channels <= 2, settings.sampleRate > 0 else {
            throw MediaError(.unsupported, "audio \(settings.channels) ch at \(settings.sampleRate) Hz")
        }
        pending = Array(repeating: [], count: settings.channels)
        if let ms = settings.clipDurationMs { limit = ms * Int64(settings.sampleRate) / 1000 }
        guard let encoder = ff.avcodec_find_encoder_by_name("aac") else {
            throw MediaError(.unsupported, "libavcodec has no native AAC encoder")
        }
        guard let st = ff.avformat_new_stream(format, nil) else { throw MediaError(.codec, "avformat_new_stream failed") }
        stream = st
        guard let ctx = ff.avcodec_alloc_context3(encoder) else { throw MediaError(.codec, "avcodec_alloc_context3 failed") }
        codec = ctx
        ctx.pointee.sample_fmt = AV_SAMPLE_FMT_FLTP
        ctx.pointee.sample_rate = Int32(settings.sampleRate)
        ff.av_channel_layout_default(&ctx.pointee.ch_layout, Int32(settings.channels))
        ctx.pointee.bit_rate = Int64(settings.bitrate)
        ctx.pointee.time_base = AVRational(num: 1, den: Int32(settings.sampleRate))
        if format.pointee.oformat.pointee.flags & cff_fmt_global_header() != 0 {
            ctx.pointee.flags |= cff_codec_flag_global_header()
        }
        var rc = ff.avcodec_open2(ctx, encoder, nil)
        guard rc >= 0 else { throw ff.error("opening the AAC encoder", rc) }
        rc = ff.avcodec_parameters_from_context(st.pointee.codecpar, ctx)
        guard rc >= 0 else { throw ff.error("audio stream parameters", rc) }
        st.pointee.time_base = ctx.pointee.time_base
        frameSize = Int(ctx.pointee.frame_size > 0 ? ctx.pointee.frame_size : 1024)

        guard let f = ff.av_frame_alloc() else { throw MediaError(.codec, "out of memory") }
        frame = f
        f.pointee.format = AV_SAMPLE_FMT_FLTP.rawValue
        f.pointee.sample_rate = ctx.pointee.sample_rate
        f.pointee.nb_samples = Int32(frameSize)
        rc = ff.av_channel_layout_copy(&f.pointee.ch_layout, &ctx.pointee.ch_layout)
        guard rc >= 0 else { throw ff.error("audio frame layout", rc) }
        rc = ff.av_frame_get_buffer(f, 0)
        guard rc >= 0 else { throw ff.error("audio frame buffer", rc) }
        packet = ff.av_packet_alloc()
        guard packet != nil else { throw MediaError(.codec, "out of memory") }
    }

    deinit {
        ff.av_packet_free(&packet)
        ff.av_frame_free(&frame)
        ff.avcodec_free_context(&codec)
    }

    var codecTimeBase: AVRational { codec!.pointee.time_base }

    /// Places `chunk` at `startSample` of the clip (may be negative) and encodes every full frame.
    func append(_ chunk: AudioChunk, startSample: Int64, write: (UnsafeMutablePointer<AVPacket>) throws(MediaError) -> Void) throws(MediaError) {
        guard chunk.channels >= 1, chunk.frames > 0 else { return }
        let end = pendingPts + Int64(pending[0].count)
        var skip = 0
        let gap = startSample - end
        if gap > tolerance {
            // Lost audio (an overrun, a late start): silence keeps later audio in sync with the video.
            let silence = Int(min(gap, max(0, limit - end)))
            for c in pending.indices { pending[c].append(contentsOf: repeatElement(0, count: silence)) }
        } else if gap < -tolerance {
            skip = Int(min(Int64(chunk.frames), -gap))  // already covered, or before the clip starts
        }
        let room = max(0, limit - (pendingPts + Int64(pending[0].count)))
        let take = min(chunk.frames - skip, Int(min(room, Int64(Int.max))))
        if take > 0 {
            chunk.samples.withUnsafeBufferPointer { s in
                for c in pending.indices {
                    let source = min(c, chunk.channels - 1)  // mono input fills both channels of a stereo track
                    for i in skip..<(skip + take) { pending[c].append(Float(s[i * chunk.channels + source]) / 32768) }
                }
            }
        }
        while pending[0].count >= frameSize { try encodeFrame(count: frameSize, write: write) }
    }

    /// Encodes what is left (a short last frame) and drains the encoder.
    func finish(write: (UnsafeMutablePointer<AVPacket>) throws(MediaError) -> Void) throws(MediaError) {
        if !pending[0].isEmpty { try encodeFrame(count: pending[0].count, write: write) }
        let rc = ff.avcodec_send_frame(codec, nil)
        guard rc >= 0 else { throw ff.error("flushing the AAC encoder", rc) }
        try drain(write)
    }

    private func encodeFrame(count: Int, write: (UnsafeMutablePointer<AVPacket>) throws(MediaError) -> Void) throws(MediaError) {
        let f = frame!
        f.pointee.nb_samples = Int32(count)  // only the last frame is short (AAC allows that)
        var rc = ff.av_frame_make_writable(f)
        guard rc >= 0 else { throw ff.error("audio frame buffer", rc) }
        for c in pending.indices {
            let plane = UnsafeMutableRawPointer(f.pointee.extended_data[c]!).assumingMemoryBound(to: Float.self)
            pending[c].withUnsafeBufferPointer { plane.update(from: $0.baseAddress!, count: count) }
            pending[c].removeFirst(count)
        }
        f.pointee.pts = pendingPts
        pendingPts += Int64(count)
        rc = ff.avcodec_send_frame(codec, f)
        guard rc >= 0 else { throw ff.error("encoding audio", rc) }
        try drain(write)
    }

    private func drain(_ write: (UnsafeMutablePointer<AVPacket>) throws(MediaError) -> Void) throws(MediaError) {
        while true {
            let rc = ff.avcodec_receive_packet(codec, packet)
            if rc == cff_averror_eagain() || rc == cff_averror_eof() { return }
            guard rc >= 0 else { throw ff.error("encoding audio", rc) }
            try write(packet!)
            packetsWritten += 1
        }
    }
}
