// FFmpeg (bookworm: libavcodec 59 / FFmpeg 5.1; trixie: libavcodec 61 / FFmpeg 7.1). Wrappers for what Swift cannot import: the
// AVERROR() macros and flag macros, and sws_scale calls whose plane/stride arrays (AVFrame's
// data/linesize import as tuples) are easier to build in C. Every FFmpeg library is dlopen'ed on
// first use (Media/SwscaleLibrary.swift, Video/FFmpegLibraries.swift) and closed again when idle,
// so nothing here calls FFmpeg directly: the wrappers take the function's address.
#include <errno.h>
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavformat/avio.h>
#include <libavutil/error.h>
#include <libavutil/imgutils.h>
#include <libavutil/opt.h>
#include <libswscale/swscale.h>

static inline int cff_averror_eagain(void) { return AVERROR(EAGAIN); }
static inline int cff_averror_eof(void) { return AVERROR_EOF; }
static inline int cff_averror_enomem(void) { return AVERROR(ENOMEM); }
static inline int cff_avseek_size(void) { return AVSEEK_SIZE; }
static inline int cff_codec_flag_global_header(void) { return AV_CODEC_FLAG_GLOBAL_HEADER; }
static inline int cff_fmt_global_header(void) { return AVFMT_GLOBALHEADER; }

// A write-only AVIOContext. FFmpeg 7 (libavformat 61) made the write callback's buffer `const`;
// Swift sees one callback type, the const one, and this cast gives FFmpeg 5.1 the type it declares
// (the same function: a pointer's constness changes nothing in the call).
// `alloc` is avio_alloc_context's address.
typedef int (*cff_avio_write_fn)(void *opaque, const uint8_t *buf, int size);
typedef int64_t (*cff_avio_seek_fn)(void *opaque, int64_t offset, int whence);
static inline AVIOContext *cff_avio_alloc_write_context(void *alloc, unsigned char *buffer, int size, void *opaque,
                                                        cff_avio_write_fn write, cff_avio_seek_fn seek) {
#if LIBAVFORMAT_VERSION_MAJOR >= 61
    return ((__typeof__(&avio_alloc_context))alloc)(buffer, size, 1, opaque, NULL, write, seek);
#else
    return ((__typeof__(&avio_alloc_context))alloc)(buffer, size, 1, opaque, NULL, (int (*)(void *, uint8_t *, int))write, seek);
#endif
}

// The exact C type of each FFmpeg function the recorder calls, taken from FFmpeg's own header
// (so a prototype that differs between FFmpeg 5.1 and 7.1 is right on both): the recorder binds
// them with dlsym (DynamicLibrary.function(_:as:)) instead of linking libavcodec.
#define CFF_FUNCTION(name) typedef __typeof__(&name) cff_fn_##name;
CFF_FUNCTION(av_log_set_level)
CFF_FUNCTION(av_opt_set)
CFF_FUNCTION(av_strerror)
CFF_FUNCTION(av_malloc)
CFF_FUNCTION(av_free)
CFF_FUNCTION(av_frame_alloc)
CFF_FUNCTION(av_frame_free)
CFF_FUNCTION(av_frame_get_buffer)
CFF_FUNCTION(av_frame_make_writable)
CFF_FUNCTION(av_channel_layout_default)
CFF_FUNCTION(av_channel_layout_copy)
CFF_FUNCTION(avcodec_find_encoder_by_name)
CFF_FUNCTION(avcodec_find_encoder)
CFF_FUNCTION(avcodec_alloc_context3)
CFF_FUNCTION(avcodec_open2)
CFF_FUNCTION(avcodec_parameters_from_context)
CFF_FUNCTION(avcodec_free_context)
CFF_FUNCTION(avcodec_send_frame)
CFF_FUNCTION(avcodec_receive_packet)
CFF_FUNCTION(av_packet_alloc)
CFF_FUNCTION(av_packet_free)
CFF_FUNCTION(av_packet_move_ref)
CFF_FUNCTION(av_packet_unref)
CFF_FUNCTION(av_new_packet)
CFF_FUNCTION(av_packet_rescale_ts)
CFF_FUNCTION(avformat_alloc_output_context2)
CFF_FUNCTION(avformat_new_stream)
CFF_FUNCTION(avformat_write_header)
CFF_FUNCTION(avformat_free_context)
CFF_FUNCTION(av_write_trailer)
CFF_FUNCTION(av_interleaved_write_frame)
CFF_FUNCTION(avio_context_free)
#undef CFF_FUNCTION

// Converts/scales one source image into an allocated AVFrame. The source is packed (src2 NULL)
// or semi-planar like NV12 (src2 = the interleaved chroma plane, same stride).
typedef int (*cff_sws_scale_fn)(struct SwsContext *, const uint8_t *const[], const int[], int, int,
                                uint8_t *const[], const int[]);

static inline int cff_scale_packed_to_frame(void *scale, struct SwsContext *ctx, const uint8_t *src, const uint8_t *src2,
                                            int src_stride, int src_height, AVFrame *dst) {
    const uint8_t *planes[4] = { src, src2, NULL, NULL };
    const int strides[4] = { src_stride, src2 ? src_stride : 0, 0, 0 };
    return ((cff_sws_scale_fn)scale)(ctx, planes, strides, 0, src_height, dst->data, dst->linesize);
}

// Converts/scales one source image (packed, or semi-planar with src2 as above) into one packed
// destination image.
static inline int cff_scale_packed(void *scale, struct SwsContext *ctx, const uint8_t *src, const uint8_t *src2, int src_stride,
                                   int src_height, uint8_t *dst, int dst_stride) {
    const uint8_t *planes[4] = { src, src2, NULL, NULL };
    const int strides[4] = { src_stride, src2 ? src_stride : 0, 0, 0 };
    uint8_t *dplanes[4] = { dst, NULL, NULL, NULL };
    const int dstrides[4] = { dst_stride, 0, 0, 0 };
    return ((cff_sws_scale_fn)scale)(ctx, planes, strides, 0, src_height, dplanes, dstrides);
}
