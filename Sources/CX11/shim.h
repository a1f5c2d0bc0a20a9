#include <X11/Xlib.h>
#include <X11/extensions/scrnsaver.h>

// Xlib exposes these as macros.
static inline Window cx11_default_root_window(Display *d) { return DefaultRootWindow(d); }
static inline int cx11_default_screen(Display *d) { return DefaultScreen(d); }
