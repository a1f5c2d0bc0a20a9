// pocketsphinx 0.8 (Debian libpocketsphinx-dev) with the packaged en-US model (pocketsphinx-en-us).
#include <pocketsphinx.h>

// cmd_ln_init is variadic, so Swift cannot call it: build the decoder's config from an argv-style
// list instead, then let pocketsphinx fill in its packaged model (acoustic model, LM, dictionary)
// for whatever the list did not set. NULL when an argument is not understood.
static inline cmd_ln_t *cps_config(int argc, char **argv) {
    cmd_ln_t *config = cmd_ln_parse_r(NULL, ps_args(), argc, argv, 1);
    if (config) ps_default_search_args(config);
    return config;
}
