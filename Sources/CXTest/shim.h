// XTest input injection for computer.act (libxtst), and XInput2 raw events to notice a person
// using the keyboard or mouse (libxi). Wrappers for Xlib's and XI2's function-like macros.
#include <X11/Xlib.h>
#include <X11/Xutil.h>
#include <X11/keysym.h>
#include <X11/extensions/XTest.h>
#include <X11/extensions/XInput2.h>

static inline Window cxtest_root_window(Display *d, int screen) { return RootWindow(d, screen); }
static inline int cxtest_default_screen(Display *d) { return DefaultScreen(d); }
static inline unsigned long cxtest_current_time(void) { return CurrentTime; }
static inline int cxtest_connection_number(Display *d) { return ConnectionNumber(d); }

// Raw key presses, button presses and motion of every device, selected on the root window.
static inline int cxtest_select_raw_input(Display *d, Window root) {
    unsigned char bits[XIMaskLen(XI_LASTEVENT)] = {0};
    XISetMask(bits, XI_RawKeyPress);
    XISetMask(bits, XI_RawButtonPress);
    XISetMask(bits, XI_RawMotion);
    XIEventMask mask = { XIAllMasterDevices, sizeof(bits), bits };
    return XISelectEvents(d, root, &mask, 1);
}

// The source (slave) device of a raw XI2 event in ev, or -1 when ev is not one (of extension opcode).
static inline int cxtest_raw_event_source(Display *d, XEvent *ev, int opcode) {
    XGenericEventCookie *cookie = &ev->xcookie;
    if (cookie->type != GenericEvent || cookie->extension != opcode || !XGetEventData(d, cookie)) return -1;
    int source = -1;
    if (cookie->evtype == XI_RawKeyPress || cookie->evtype == XI_RawButtonPress || cookie->evtype == XI_RawMotion)
        source = ((XIRawEvent *)cookie->data)->sourceid;
    XFreeEventData(d, cookie);
    return source;
}
