// glibc malloc tuning for the daemon. M_ARENA_MAX is a macro, so Swift gets a function.
#include <malloc.h>

// Caps the number of malloc arenas. glibc gives threads up to 8 per core; the daemon runs blocking
// work (system.run, capture, encoding) on short-lived threads, and each arena keeps the memory
// freed into it, so large transient buffers settled into ever more arenas.
static inline int cmalloc_limit_arenas(int n) { return mallopt(M_ARENA_MAX, n); }
