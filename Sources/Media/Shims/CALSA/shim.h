// alsa-lib (bookworm: 1.2.8). Swift imports the PCM API directly; the one thing it cannot write is
// alsa-lib's variadic error handler, which by default prints "ALSA lib pcm.c:…" lines to stderr.
// The node reports ALSA errors itself (snd_strerror in a typed error), so that output is muted.
#include <alsa/asoundlib.h>

static inline void calsa_quiet_handler(const char *file, int line, const char *function, int err,
                                       const char *fmt, ...) {
    (void)file; (void)line; (void)function; (void)err; (void)fmt;
}

static inline void calsa_silence_errors(void) { snd_lib_error_set_handler(calsa_quiet_handler); }
