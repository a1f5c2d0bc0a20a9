// Stands in for a person at the desk in computer-control tests: clicks button 1 through the XTEST
// device of a master pair other than the core one (made with `xinput create-master NAME`), so the
// X server reports the input from a device the node does not inject through.
//   person_click DISPLAY "NAME XTEST pointer"
#include <X11/Xlib.h>
#include <X11/extensions/XInput.h>
#include <X11/extensions/XInput2.h>
#include <X11/extensions/XTest.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv) {
    if (argc != 3) { fprintf(stderr, "usage: person_click DISPLAY DEVICE-NAME\n"); return 2; }
    Display *d = XOpenDisplay(argv[1]);
    if (!d) { fprintf(stderr, "cannot open %s\n", argv[1]); return 1; }
    int count = 0, id = -1;
    XIDeviceInfo *info = XIQueryDevice(d, XIAllDevices, &count);
    for (int i = 0; i < count; i++) if (strcmp(info[i].name, argv[2]) == 0) id = info[i].deviceid;
    XIFreeDeviceInfo(info);
    if (id < 0) { fprintf(stderr, "no device named %s\n", argv[2]); return 1; }
    XDevice *dev = XOpenDevice(d, id);
    if (!dev) { fprintf(stderr, "cannot open device %d\n", id); return 1; }
    XTestFakeDeviceButtonEvent(d, dev, 1, True, NULL, 0, CurrentTime);
    XTestFakeDeviceButtonEvent(d, dev, 1, False, NULL, 0, CurrentTime);
    XSync(d, False);
    XCloseDevice(d, dev);
    XCloseDisplay(d);
    return 0;
}
