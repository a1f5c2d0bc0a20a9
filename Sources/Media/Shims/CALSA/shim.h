// alsa-lib (bookworm: 1.2.8), headers only: libasound is opened with dlopen when a microphone is
// first used (Media/ALSALibrary.swift), so this module has no `link` line and nothing may call
// alsa-lib directly. What Swift cannot write itself is alsa-lib's variadic error handler, which by
// default prints "ALSA lib pcm.c:…" lines to stderr; the node reports ALSA errors itself
// (snd_strerror in a typed error), so that output is muted.
#include <alsa/asoundlib.h>

static inline void calsa_quiet_handler(const char *file, int line, const char *function, int err,
                                       const char *fmt, ...) {
    (void)file; (void)line; (void)function; (void)err; (void)fmt;
}

// `set_handler` is libasound's snd_lib_error_set_handler, looked up with dlsym.
static inline void calsa_silence_errors(void *set_handler) {
    ((int (*)(snd_lib_error_handler_t))set_handler)(calsa_quiet_handler);
}
