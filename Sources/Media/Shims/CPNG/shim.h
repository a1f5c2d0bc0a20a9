// libpng's "simplified" API only: the classic API reports errors with setjmp/longjmp, which Swift
// cannot use. The format and size helpers below wrap composite and function-like macros.
#include <png.h>

static inline png_uint_32 cpng_format_rgb(void) { return PNG_FORMAT_RGB; }

// Worst-case size of the encoded file, so one buffer is enough (no size-query pass).
static inline size_t cpng_size_max(const png_image *image) { return PNG_IMAGE_PNG_SIZE_MAX(*image); }
