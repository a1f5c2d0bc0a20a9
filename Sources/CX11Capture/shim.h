// Xlib + MIT-SHM + XRandR + XFixes + DAMAGE for screen capture. Wrappers for Xlib's function-like macros,
// for shmget's IPC_PRIVATE key, and the lost-connection survival hook: Xlib's default I/O error
// handler exits the whole process when the server goes away. (Protocol errors, whose default
// handler also exits, are trapped on the Swift side: X11ErrorTrap.)
#include <X11/Xlib.h>
#include <X11/Xutil.h>
#include <X11/extensions/XShm.h>
#include <X11/extensions/Xrandr.h>
#include <X11/extensions/Xfixes.h>
#include <X11/extensions/Xdamage.h>
#include <sys/ipc.h>
#include <sys/shm.h>

static inline Window cx11cap_root_window(Display *d, int screen) { return RootWindow(d, screen); }
static inline int cx11cap_default_screen(Display *d) { return DefaultScreen(d); }
static inline int cx11cap_screen_count(Display *d) { return ScreenCount(d); }
static inline int cx11cap_display_width(Display *d, int screen) { return DisplayWidth(d, screen); }
static inline int cx11cap_display_height(Display *d, int screen) { return DisplayHeight(d, screen); }
static inline Visual *cx11cap_default_visual(Display *d, int screen) { return DefaultVisual(d, screen); }
static inline int cx11cap_default_depth(Display *d, int screen) { return DefaultDepth(d, screen); }
static inline unsigned long cx11cap_all_planes(void) { return AllPlanes; }
static inline int cx11cap_destroy_image(XImage *image) { return XDestroyImage(image); }

// A private System V segment (IPC_PRIVATE is a cast expression Swift does not import).
static inline int cx11cap_shm_create(size_t size) { return shmget(IPC_PRIVATE, size, IPC_CREAT | 0600); }
static inline int cx11cap_shm_remove(int id) { return shmctl(id, IPC_RMID, NULL); }

// Lost connection: return instead of exiting, and raise *dead_flag so the owner abandons (never
// closes) the broken Display. Same contract as CX11's cx11_survive_io_errors.
static int cx11cap_io_error_return(Display *d) { (void)d; return 0; }
static void cx11cap_io_exit_mark_dead(Display *d, void *dead_flag) {
    (void)d;
    if (dead_flag) *(volatile int *)dead_flag = 1;
}
static inline void cx11cap_survive_io_errors(Display *d, int *dead_flag) {
    XSetIOErrorHandler(cx11cap_io_error_return);
    XSetIOErrorExitHandler(d, cx11cap_io_exit_mark_dead, dead_flag);
}
