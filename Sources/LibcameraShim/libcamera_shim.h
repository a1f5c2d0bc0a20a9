/* libopenclaw-libcamera.so: libcamera's C++ API behind plain C, for the camera bundle, which opens
 * it with dlopen (never a NEEDED entry of the node), so one node package serves every release and
 * the library is built per release against that release's libcamera (Debian 13: libcamera0.4).
 * Every function is safe to call from one thread at a time per handle; strings returned are
 * malloc'ed and freed with ocl_free. */
#ifndef OPENCLAW_LIBCAMERA_SHIM_H
#define OPENCLAW_LIBCAMERA_SHIM_H
#include <stddef.h>
#include <stdint.h>
#ifdef __cplusplus
extern "C" {
#endif

/* The cameras as JSON: [{"id", "model", "location": "front"|"back"|"external"|"unknown",
 * "width", "height"}], or NULL with *error set. */
char *ocl_list(char **error);

/* Opens camera `id` for NV12 frames of about width x height (what the camera can do nearest),
 * for a still (video 0: one buffer) or video (video 1: four, streaming). NULL with *error set;
 * an error starting "busy:" means another process holds the camera. */
void *ocl_open(const char *id, int width, int height, int video, char **error);

/* The size and line stride the camera was configured with. */
void ocl_format(void *handle, int *width, int *height, int *stride);

/* Waits up to timeout_ms for the next frame and returns it as contiguous NV12 (stride bytes per
 * line, the Y plane then the interleaved UV plane) in *data (valid until the next call or close),
 * with its capture time on CLOCK_MONOTONIC in ns. 0 on success, -1 with *error set. */
int ocl_frame(void *handle, int timeout_ms, const uint8_t **data, size_t *length, int64_t *timestamp_ns, char **error);

/* Stops the camera and releases it for other processes. */
void ocl_close(void *handle);

void ocl_free(void *p);

/* The libcamera version this library was built against ("0.4.0"). */
const char *ocl_version(void);

#ifdef __cplusplus
}
#endif
#endif
