// FFmpeg (bookworm: libavcodec 59 / FFmpeg 5.1). Wrappers for what Swift cannot import: the
// AVERROR() macros and flag macros, and sws_scale calls whose plane/stride arrays (AVFrame's
// data/linesize import as tuples) are easier to build in C. libswscale is dlopen'ed on first use
// (Media/SwscaleLibrary.swift), so the scale wrappers take sws_scale's address as `scale`.
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
