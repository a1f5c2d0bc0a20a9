// pocketsphinx 0.8 (Debian libpocketsphinx-dev) with the packaged en-US model (pocketsphinx-en-us).
#include <pocketsphinx.h>
#include <malloc.h>

// cmd_ln_init is variadic, so Swift cannot call it: build the decoder's config from an argv-style
// list instead. The list names every model file itself; pocketsphinx's packaged defaults are not
// filled in, since they would load the language model at ps_init, which the recognizer loads and
// releases on its own schedule. NULL when an argument is not understood.
static inline cmd_ln_t *cps_config(int argc, char **argv) {
    return cmd_ln_parse_r(NULL, ps_args(), argc, argv, 1);
}

// pocketsphinx frees the language model and dictionary as tens of thousands of small blocks in
// the middle of the heap: give those pages back to the system, so releasing them lowers the
// daemon's resident memory instead of only its heap's free lists.
static inline void cps_return_free_memory(void) {
    malloc_trim(0);
}
