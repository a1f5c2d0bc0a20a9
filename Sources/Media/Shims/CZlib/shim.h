// zlib, for the PNG writer's deflate streams and chunk CRCs (libpng links it anyway, so the node
// loads nothing new). deflateInit2 is a macro that passes the header's version and the stream's
// size; Swift cannot call macros, so it is wrapped here.
#include <zlib.h>

// A raw deflate stream (no zlib header or trailer: the PNG writer joins several strips, each
// compressed on its own thread, into one zlib stream and writes header and Adler-32 itself).
static inline int czlib_deflate_init_raw(z_stream *stream, int level, int strategy) {
    return deflateInit2(stream, level, Z_DEFLATED, -MAX_WBITS, 8, strategy);
}
