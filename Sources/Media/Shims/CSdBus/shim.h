// sd-bus (libsystemd, on every Debian system): the session bus client of the desktop backends
// (GNOME's Mutter, KDE's KWin, the portals). Only its non-variadic calls are used, so nothing
// needs wrapping; the header is the module.
#include <systemd/sd-bus.h>
