import CFFmpeg
import Media
import Support

/// libavformat, libavcodec and libavutil, opened with dlopen when a recorder is made and closed
/// again once no recorder has existed for `IdleLibraryRelease.after` (node.releaseIdleLibrariesAfter):
/// libavcodec and the ~130 codec libraries it brings are about 38 MiB of a daemon's resident memory
/// after one clip, and a node records rarely. This library itself (Swift code) stays loaded: the
/// Swift runtime keeps pointers to every loaded image's type metadata and conformances.
///
/// Each member has the exact C type of the FFmpeg function of the same name (CFFmpeg's cff_fn_*
/// typedefs come from FFmpeg's own prototypes). The struct keeps the libraries open: every object
/// that calls through it keeps a copy, so they cannot be closed under a recorder.
struct FFmpegLibraries: @unchecked Sendable {  // function addresses and the handles they live in, immutable
    private let handles: [DynamicLibrary]

    let av_log_set_level: cff_fn_av_log_set_level
    let av_opt_set: cff_fn_av_opt_set
    let av_strerror: cff_fn_av_strerror
    let av_malloc: cff_fn_av_malloc
    let av_free: cff_fn_av_free
    let av_frame_alloc: cff_fn_av_frame_alloc
    let av_frame_free: cff_fn_av_frame_free
    let av_frame_get_buffer: cff_fn_av_frame_get_buffer
    let av_frame_make_writable: cff_fn_av_frame_make_writable
    let av_channel_layout_default: cff_fn_av_channel_layout_default
    let av_channel_layout_copy: cff_fn_av_channel_layout_copy
    let avcodec_find_encoder_by_name: cff_fn_avcodec_find_encoder_by_name
    let avcodec_find_encoder: cff_fn_avcodec_find_encoder
    let avcodec_alloc_context3: cff_fn_avcodec_alloc_context3
    let avcodec_open2: cff_fn_avcodec_open2
    let avcodec_parameters_from_context: cff_fn_avcodec_parameters_from_context
    let avcodec_free_context: cff_fn_avcodec_free_context
    let avcodec_send_frame: cff_fn_avcodec_send_frame
    let avcodec_receive_packet: cff_fn_avcodec_receive_packet
    let av_packet_alloc: cff_fn_av_packet_alloc
    let av_packet_free: cff_fn_av_packet_free
    let av_packet_move_ref: cff_fn_av_packet_move_ref
    let av_packet_unref: cff_fn_av_packet_unref
    let av_new_packet: cff_fn_av_new_packet
    let av_packet_rescale_ts: cff_fn_av_packet_rescale_ts
    let avformat_alloc_output_context2: cff_fn_avformat_alloc_output_context2
    let avformat_new_stream: cff_fn_avformat_new_stream
    let avformat_write_header: cff_fn_avformat_write_header
    let avformat_free_context: cff_fn_avformat_free_context
    let av_write_trailer: cff_fn_av_write_trailer
    let av_interleaved_write_frame: cff_fn_av_interleaved_write_frame
    let avio_context_free: cff_fn_avio_context_free
    /// avio_alloc_context's address, for the shim that papers over its FFmpeg 5/7 callback type.
    let avio_alloc_context: UnsafeMutableRawPointer

    /// Loaded by the first recorder, released after the idle period (then the next loads them again).
    static let shared = IdleReleased<FFmpegLibraries, DynamicLibrary.Failure>(
        load: { Result { () throws(DynamicLibrary.Failure) in try FFmpegLibraries() } },
        releaseAfter: { IdleLibraryRelease.after },
        released: { IdleLibraryRelease.librariesReleased("libavcodec, libavformat and libavutil") })

    /// The libraries for one recorder's lifetime.
    static func lease() throws(MediaError) -> IdleReleased<FFmpegLibraries, DynamicLibrary.Failure>.Lease {
        switch shared.lease() {
        case .success(let lease): return lease
        case .failure(let f): throw MediaError(.unsupported, "video recording is not available: \(f.description)")
        }
    }

    private init() throws(DynamicLibrary.Failure) {
        let util = try DynamicLibrary("libavutil.so.\(LIBAVUTIL_VERSION_MAJOR)", package: "libavutil\(LIBAVUTIL_VERSION_MAJOR)",
                                      closeWhenReleased: true)
        let codec = try DynamicLibrary("libavcodec.so.\(LIBAVCODEC_VERSION_MAJOR)", package: "libavcodec\(LIBAVCODEC_VERSION_MAJOR)",
                                       closeWhenReleased: true)
        let format = try DynamicLibrary("libavformat.so.\(LIBAVFORMAT_VERSION_MAJOR)", package: "libavformat\(LIBAVFORMAT_VERSION_MAJOR)",
                                        closeWhenReleased: true)
        handles = [format, codec, util]
        av_log_set_level = try util.function("av_log_set_level")
        av_opt_set = try util.function("av_opt_set")
        av_strerror = try util.function("av_strerror")
        av_malloc = try util.function("av_malloc")
        av_free = try util.function("av_free")
        av_frame_alloc = try util.function("av_frame_alloc")
        av_frame_free = try util.function("av_frame_free")
        av_frame_get_buffer = try util.function("av_frame_get_buffer")
        av_frame_make_writable = try util.function("av_frame_make_writable")
        av_channel_layout_default = try util.function("av_channel_layout_default")
        av_channel_layout_copy = try util.function("av_channel_layout_copy")
        avcodec_find_encoder_by_name = try codec.function("avcodec_find_encoder_by_name")
        avcodec_find_encoder = try codec.function("avcodec_find_encoder")
        avcodec_alloc_context3 = try codec.function("avcodec_alloc_context3")
        avcodec_open2 = try codec.function("avcodec_open2")
        avcodec_parameters_from_context = try codec.function("avcodec_parameters_from_context")
        avcodec_free_context = try codec.function("avcodec_free_context")
        avcodec_send_frame = try codec.function("avcodec_send_frame")
        avcodec_receive_packet = try codec.function("avcodec_receive_packet")
        av_packet_alloc = try codec.function("av_packet_alloc")
        av_packet_free = try codec.function("av_packet_free")
        av_packet_move_ref = try codec.function("av_packet_move_ref")
        av_packet_unref = try codec.function("av_packet_unref")
        av_new_packet = try codec.function("av_new_packet")
        av_packet_rescale_ts = try codec.function("av_packet_rescale_ts")
        avformat_alloc_output_context2 = try format.function("avformat_alloc_output_context2")
        avformat_new_stream = try format.function("avformat_new_stream")
        avformat_write_header = try format.function("avformat_write_header")
        avformat_free_context = try format.function("avformat_free_context")
        av_write_trailer = try format.function("av_write_trailer")
        av_interleaved_write_frame = try format.function("av_interleaved_write_frame")
        avio_context_free = try format.function("avio_context_free")
        avio_alloc_context = try format.address("avio_alloc_context")
    }
}
