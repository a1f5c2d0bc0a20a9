// FFmpeg (bookworm: libavcodec 59 / FFmpeg 5.1; trixie: libavcodec 61 / FFmpeg 7.1). Wrappers for what Swift cannot import: the
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

// A write-only AVIOContext. FFmpeg 7 (libavformat 61) made the write callback's buffer `const`;
// Swift sees one callback type, the const one, and this cast gives FFmpeg 5.1 the type it declares
// (the same function: a pointer's constness changes nothing in the call).
typedef int (*cff_avio_write_fn)(void *opaque, const uint8_t *buf, int size);
typedef int64_t (*cff_avio_seek_fn)(void *opaque, int64_t offset, int whence);
static inline AVIOContext *cff_avio_alloc_write_context(unsigned char *buffer, int size, void *opaque,
                                                        cff_avio_write_fn write, cff_avio_seek_fn seek) {
#if LIBAVFORMAT_VERSION_MAJOR >= 61
    return avio_alloc_context(buffer, size, 1, opaque, NULL, write, seek);
#else
    return avio_alloc_context(buffer, size, 1, opaque, NULL, (int (*)(void *, uint8_t *, int))write, seek);
#endif
}

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
