// libpipewire-0.3 (Debian 12: 0.3.65; Debian 13: 1.4, the same API): the client side of a
// screen-cast stream (GNOME's Mutter and KDE's KWin both hand screen frames over PipeWire).
// SPA builds and parses its parameters with macros and static inline functions, which Swift
// cannot call: the few the node needs are wrapped here.
#include <pipewire/pipewire.h>
#include <spa/param/video/format-utils.h>
#include <spa/param/buffers.h>
#include <spa/buffer/buffer.h>
#include <spa/pod/builder.h>

// The formats the node reads (32-bit RGB in either byte order, with or without alpha), any size,
// any frame rate: what a screen-cast stream offers without a GPU (no DMA-BUF modifiers).
static inline const struct spa_pod *ocpw_video_formats(uint8_t *buffer, uint32_t size) {
    struct spa_pod_builder b = SPA_POD_BUILDER_INIT(buffer, size);
    struct spa_rectangle def = SPA_RECTANGLE(1920, 1080), min = SPA_RECTANGLE(1, 1), max = SPA_RECTANGLE(16384, 16384);
    struct spa_fraction rate = SPA_FRACTION(30, 1), rmin = SPA_FRACTION(0, 1), rmax = SPA_FRACTION(1000, 1);
    return (const struct spa_pod *)spa_pod_builder_add_object(&b, SPA_TYPE_OBJECT_Format, SPA_PARAM_EnumFormat,
        SPA_FORMAT_mediaType, SPA_POD_Id(SPA_MEDIA_TYPE_video),
        SPA_FORMAT_mediaSubtype, SPA_POD_Id(SPA_MEDIA_SUBTYPE_raw),
        SPA_FORMAT_VIDEO_format, SPA_POD_CHOICE_ENUM_Id(5, SPA_VIDEO_FORMAT_BGRx, SPA_VIDEO_FORMAT_BGRx, SPA_VIDEO_FORMAT_BGRA,
                                                        SPA_VIDEO_FORMAT_RGBx, SPA_VIDEO_FORMAT_RGBA),
        SPA_FORMAT_VIDEO_size, SPA_POD_CHOICE_RANGE_Rectangle(&def, &min, &max),
        SPA_FORMAT_VIDEO_framerate, SPA_POD_CHOICE_RANGE_Fraction(&rate, &rmin, &rmax));
}

// Buffers in memory the node can map (memfd or plain memory): no DMA-BUF, which needs a GPU to read.
static inline const struct spa_pod *ocpw_buffer_types(uint8_t *buffer, uint32_t size) {
    struct spa_pod_builder b = SPA_POD_BUILDER_INIT(buffer, size);
    return (const struct spa_pod *)spa_pod_builder_add_object(&b, SPA_TYPE_OBJECT_ParamBuffers, SPA_PARAM_Buffers,
        SPA_PARAM_BUFFERS_dataType, SPA_POD_CHOICE_FLAGS_Int((1 << SPA_DATA_MemFd) | (1 << SPA_DATA_MemPtr)));
}

// The negotiated format: 0 and the SPA video format, width and height, or a negative errno.
static inline int ocpw_parse_video(const struct spa_pod *param, uint32_t *format, uint32_t *width, uint32_t *height) {
    uint32_t media_type = 0, media_subtype = 0;
    if (spa_format_parse(param, &media_type, &media_subtype) < 0) return -22;
    if (media_type != SPA_MEDIA_TYPE_video || media_subtype != SPA_MEDIA_SUBTYPE_raw) return -95;
    struct spa_video_info_raw info;
    spa_zero(info);
    if (spa_format_video_raw_parse(param, &info) < 0) return -22;
    *format = info.format; *width = info.size.width; *height = info.size.height;
    return 0;
}

// pw_stream_connect's flags for a consumer that maps what it reads.
static inline enum pw_stream_flags ocpw_input_flags(void) {
    return (enum pw_stream_flags)(PW_STREAM_FLAG_AUTOCONNECT | PW_STREAM_FLAG_MAP_BUFFERS);
}

static inline uint32_t ocpw_stream_events_version(void) { return PW_VERSION_STREAM_EVENTS; }

// pw_stream_add_listener is a function in 0.3; kept here so the caller's hook storage is one type.
static inline void ocpw_stream_listen(struct pw_stream *stream, struct spa_hook *hook, const struct pw_stream_events *events, void *data) {
    pw_stream_add_listener(stream, hook, events, data);
}
