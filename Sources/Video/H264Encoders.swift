import CFFmpeg
import Media

/// Which H.264 encoder a recording gets. A hardware encoder first — V4L2 memory-to-memory
/// (h264_v4l2m2m: Raspberry Pi and other SoCs), which takes the same YUV 4:2:0 frames from memory —
/// then libx264. Whether the hardware one works is only known by opening it (the kernel device is
/// found then), so each recording tries it and falls back when it does not open; the reasons go
/// to the recorder's `rejectedEncoders` (doctor and the debug log show them).
/// VAAPI (h264_vaapi) is not tried: it needs GPU surfaces and an upload per frame, not plain frames.
enum H264Encoders {
    static let preference = ["h264_v4l2m2m", "libx264", "libopenh264"]
    /// Encoders whose failure to open is expected on most machines: their complaint goes to
    /// `rejectedEncoders`, not to stderr.
    static let hardware: Set<String> = ["h264_v4l2m2m", "h264_vaapi", "h264_nvenc", "h264_qsv"]

    /// Opens the first of `names` that this libavcodec has and that opens with `configure`
    /// (libavcodec's default H.264 encoder last). Returns the open context and why the others were passed over.
    static func open(_ names: [String], _ ff: FFmpegLibraries,
                     configure: (UnsafeMutablePointer<AVCodecContext>, String) -> Void) throws(MediaError)
        -> (context: UnsafeMutablePointer<AVCodecContext>, name: String, rejected: [String]) {
        var rejected: [String] = []
        var tried: [UnsafePointer<AVCodec>] = []
        for name in names + [nil] as [String?] {
            let found = name.map { ff.avcodec_find_encoder_by_name($0) } ?? ff.avcodec_find_encoder(AV_CODEC_ID_H264)
            guard let encoder = found else {
                if let name { rejected.append("\(name): not in this libavcodec") }
                continue
            }
            if tried.contains(encoder) { continue }
            tried.append(encoder)
            let encoderName = String(cString: encoder.pointee.name)
            guard let ctx = ff.avcodec_alloc_context3(encoder) else { throw MediaError(.codec, "avcodec_alloc_context3 failed") }
            configure(ctx, encoderName)
            let quiet = hardware.contains(encoderName)
            if quiet { ff.av_log_set_level(AV_LOG_QUIET) }
            let rc = ff.avcodec_open2(ctx, encoder, nil)
            if quiet { ff.av_log_set_level(AV_LOG_ERROR) }
            if rc >= 0 { return (ctx, encoderName, rejected) }
            var failed: UnsafeMutablePointer<AVCodecContext>? = ctx
            ff.avcodec_free_context(&failed)
            rejected.append("\(encoderName): \(ff.error("does not open", rc).description)")
        }
        throw MediaError(.unsupported, "libavcodec has no H.264 encoder that opens (install libavcodec with libx264)" +
                         (rejected.isEmpty ? "" : "; " + rejected.joined(separator: "; ")))
    }
}
