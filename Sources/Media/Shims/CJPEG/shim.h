// libjpeg (libjpeg-turbo's libjpeg62 API) for the JPEG encoder. The TurboJPEG API (CTurboJPEG) has
// no restart markers in the 2.1 that Debian ships; the encoder needs them to encode an image's
// horizontal strips on several cores and join them into one stream (Media/JPEGStripEncoder.swift).
//
// libjpeg reports errors by calling error_exit, which must not return; Swift cannot catch a
// longjmp, so one function here does the whole compression inside setjmp.
#include <stdio.h>
#include <stdlib.h>
#include <setjmp.h>
#include <string.h>
#include <jpeglib.h>
#include <jerror.h>

struct ocn_jpeg_error {
    struct jpeg_error_mgr mgr;
    jmp_buf escape;
    char message[JMSG_LENGTH_MAX];
};

static void ocn_jpeg_error_exit(j_common_ptr cinfo) {
    struct ocn_jpeg_error *e = (struct ocn_jpeg_error *)cinfo->err;
    (*cinfo->err->format_message)(cinfo, e->message);
    longjmp(e->escape, 1);
}

static void ocn_jpeg_silent(j_common_ptr cinfo, int level) { (void)cinfo; (void)level; }

// A growing malloc'ed output buffer owned here (jpeg_mem_dest's own buffer cannot be freed after
// an error: it keeps the grown buffer in a private struct).
struct ocn_jpeg_dest {
    struct jpeg_destination_mgr mgr;
    unsigned char *buffer;
    size_t capacity;
};

static void ocn_jpeg_dest_init(j_compress_ptr cinfo) {
    struct ocn_jpeg_dest *d = (struct ocn_jpeg_dest *)cinfo->dest;
    d->mgr.next_output_byte = d->buffer;
    d->mgr.free_in_buffer = d->capacity;
}

static boolean ocn_jpeg_dest_grow(j_compress_ptr cinfo) {
    struct ocn_jpeg_dest *d = (struct ocn_jpeg_dest *)cinfo->dest;
    unsigned char *grown = (unsigned char *)realloc(d->buffer, d->capacity * 2);
    if (!grown) ERREXIT(cinfo, JERR_OUT_OF_MEMORY);
    d->buffer = grown;
    d->mgr.next_output_byte = grown + d->capacity;
    d->mgr.free_in_buffer = d->capacity;
    d->capacity *= 2;
    return TRUE;
}

static void ocn_jpeg_dest_term(j_compress_ptr cinfo) { (void)cinfo; }

/// Compresses `height` rows of `width` pixels (`stride` bytes apart, in `colorSpace`, one of the
/// JCS_EXT_* layouts) as baseline 4:2:0 JPEG with the fast integer DCT, standard Huffman tables
/// and a restart marker every `restartInterval` MCUs (0: none). The stream is malloc'ed into
/// `*out` (the caller frees it). Returns 0, or -1 with libjpeg's message in `error`.
static inline int ocn_jpeg_compress(const unsigned char *pixels, unsigned width, unsigned height, size_t stride,
                                    int colorSpace, int quality, unsigned restartInterval,
                                    unsigned char **out, unsigned long *outSize, char *error, size_t errorSize) {
    struct jpeg_compress_struct cinfo;
    struct ocn_jpeg_error err;
    // On the heap: what setjmp returns to reads it, and a local changed since setjmp may be stale.
    struct ocn_jpeg_dest *dest = (struct ocn_jpeg_dest *)calloc(1, sizeof *dest);
    *out = NULL;
    *outSize = 0;
    if (dest) {
        dest->capacity = 65536;
        dest->buffer = (unsigned char *)malloc(dest->capacity);
    }
    if (!dest || !dest->buffer) {
        free(dest);
        snprintf(error, errorSize, "out of memory");
        return -1;
    }
    dest->mgr.init_destination = ocn_jpeg_dest_init;
    dest->mgr.empty_output_buffer = ocn_jpeg_dest_grow;
    dest->mgr.term_destination = ocn_jpeg_dest_term;
    cinfo.err = jpeg_std_error(&err.mgr);
    err.mgr.error_exit = ocn_jpeg_error_exit;
    err.mgr.emit_message = ocn_jpeg_silent;
    err.message[0] = 0;
    if (setjmp(err.escape)) {
        snprintf(error, errorSize, "%s", err.message);
        jpeg_destroy_compress(&cinfo);
        free(dest->buffer);
        free(dest);
        return -1;
    }
    jpeg_create_compress(&cinfo);
    cinfo.dest = &dest->mgr;
    cinfo.image_width = width;
    cinfo.image_height = height;
    cinfo.input_components = colorSpace == JCS_EXT_RGB || colorSpace == JCS_EXT_BGR ? 3 : 4;
    cinfo.in_color_space = (J_COLOR_SPACE)colorSpace;
    jpeg_set_defaults(&cinfo);  // YCbCr, 2x2 luma sampling (4:2:0), standard Huffman tables
    jpeg_set_quality(&cinfo, quality, TRUE);
    cinfo.dct_method = JDCT_IFAST;
    cinfo.restart_interval = restartInterval;
    jpeg_start_compress(&cinfo, TRUE);
    JSAMPROW rows[16];
    while (cinfo.next_scanline < cinfo.image_height) {
        unsigned n = 0;
        while (n < 16 && cinfo.next_scanline + n < cinfo.image_height) {
            rows[n] = (JSAMPROW)(pixels + (size_t)(cinfo.next_scanline + n) * stride);
            n++;
        }
        jpeg_write_scanlines(&cinfo, rows, n);
    }
    jpeg_finish_compress(&cinfo);
    *outSize = dest->capacity - dest->mgr.free_in_buffer;
    *out = dest->buffer;
    jpeg_destroy_compress(&cinfo);
    free(dest);
    return 0;
}
