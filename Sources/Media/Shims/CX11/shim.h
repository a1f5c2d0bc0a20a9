#include <X11/Xlib.h>
#include <X11/extensions/scrnsaver.h>
#include <X11/extensions/Xrandr.h>

// Xlib exposes these as macros.
static inline Window cx11_default_root_window(Display *d) { return DefaultRootWindow(d); }
static inline int cx11_default_screen(Display *d) { return DefaultScreen(d); }
static inline Window cx11_root_window(Display *d, int screen) { return RootWindow(d, screen); }
static inline int cx11_screen_count(Display *d) { return ScreenCount(d); }
static inline int cx11_display_width(Display *d, int screen) { return DisplayWidth(d, screen); }
static inline int cx11_display_height(Display *d, int screen) { return DisplayHeight(d, screen); }

// Xlib's default I/O error path prints "XIO: fatal IO error" and exits the whole process when an X
// server goes away. A daemon must survive that: these handlers return instead, and the exit handler
// raises *dead_flag so the owner stops using (and never closes) the broken Display.
static int cx11_io_error_return(Display *d) { (void)d; return 0; }
static void cx11_io_exit_mark_dead(Display *d, void *dead_flag) {
    (void)d;
    if (dead_flag) *(volatile int *)dead_flag = 1;
}
static inline void cx11_survive_io_errors(Display *d, int *dead_flag) {
    XSetIOErrorHandler(cx11_io_error_return);
    XSetIOErrorExitHandler(d, cx11_io_exit_mark_dead, dead_flag);
}
