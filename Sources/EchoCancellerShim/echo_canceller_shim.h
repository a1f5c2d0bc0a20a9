/* libopenclaw-aec.so: WebRTC's audio processing (echo cancellation, high-pass, noise suppression)
 * behind plain C, for realtime talk in full duplex. libwebrtc-audio-processing has only a C++ API,
 * and a different one per Debian release (0.3 on Debian 12, 1.x on Debian 13): this library is
 * built per release and opened by the talk bundle with dlopen, so neither the node nor the bundle
 * depends on it. Mono float audio in [-1, 1], 10 ms frames at the rate given to ocn_aec_new
 * (8, 16, 32 or 48 kHz). The render (reply) and capture (microphone) sides may be fed from two
 * threads. */
#ifndef OPENCLAW_ECHO_CANCELLER_SHIM_H
#define OPENCLAW_ECHO_CANCELLER_SHIM_H
#ifdef __cplusplus
extern "C" {
#endif

/* A canceller at `rate` Hz; NULL when the rate is not supported. */
void *ocn_aec_new(int rate);

/* 10 ms of what the speaker plays (the echo's reference). 0 on success. */
int ocn_aec_render(void *aec, const float *frame);

/* 10 ms of the microphone, replaced by it with the echo removed; `delay_ms` is the time from a
 * render frame to its echo in a capture frame, as far as it is known (the canceller adapts).
 * 0 on success. */
int ocn_aec_capture(void *aec, float *frame, int delay_ms);

void ocn_aec_free(void *aec);

/* "webrtc-audio-processing 0.3" or "… 1.x": which API this was built with. */
const char *ocn_aec_version(void);

#ifdef __cplusplus
}
#endif
#endif
