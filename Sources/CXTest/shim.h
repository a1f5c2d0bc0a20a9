// XTest input injection for computer.act (libxtst). Wrappers for Xlib's function-like macros.
#include <X11/Xlib.h>
#include <X11/Xutil.h>
#include <X11/keysym.h>
#include <X11/extensions/XTest.h>

static inline Window cxtest_root_window(Display *d, int screen) { return RootWindow(d, screen); }
static inline int cxtest_default_screen(Display *d) { return DefaultScreen(d); }
static inline unsigned long cxtest_current_time(void) { return CurrentTime; }
