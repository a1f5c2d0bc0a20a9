// libjpeg-turbo's TurboJPEG 2.x API (bookworm ships 2.1; the tj3* API is not available).
// Everything Swift needs imports directly: the handle is an opaque pointer, TJPF/TJSAMP are enums
// and the TJFLAG_* constants are plain integer #defines.
#include <turbojpeg.h>
