"""Draws a raw 1920x1080 BGRX picture on an X display's root window through the X server, as a
program would (so the server reports the damage to screen recorders); with "scroll" it keeps
scrolling the picture up 12 rows every 100 ms like an editor: XCopyArea moves what is shown and
XPutImage draws the new bottom rows. Used by scripts/bench-screen.

    python3 scripts/bench_x11_paint.py DISPLAY FRAME.raw static|scroll
"""
import ctypes, sys, time

W, H, STEP = 1920, 1080, 12
c_void, c_ulong, c_int, c_uint = ctypes.c_void_p, ctypes.c_ulong, ctypes.c_int, ctypes.c_uint

x = ctypes.CDLL("libX11.so.6")
def declare(name, restype, *argtypes):
    f = getattr(x, name)
    f.restype, f.argtypes = restype, list(argtypes)
declare("XOpenDisplay", c_void, ctypes.c_char_p)
declare("XDefaultRootWindow", c_ulong, c_void)
declare("XDefaultVisual", c_void, c_void, c_int)
declare("XDefaultDepth", c_int, c_void, c_int)
declare("XCreateGC", c_void, c_void, c_ulong, c_ulong, c_void)
declare("XCreateImage", c_void, c_void, c_void, c_uint, c_int, c_int, c_void, c_uint, c_uint, c_int, c_int)
declare("XPutImage", c_int, c_void, c_ulong, c_void, c_void, c_int, c_int, c_int, c_int, c_uint, c_uint)
declare("XCopyArea", c_int, c_void, c_ulong, c_ulong, c_void, c_int, c_int, c_uint, c_uint, c_int, c_int)
declare("XSync", c_int, c_void, c_int)


def main():
    display_name, frame_path, mode = sys.argv[1:4]
    frame = open(frame_path, "rb").read()
    doubled = frame + frame  # rows wrap around while scrolling
    d = x.XOpenDisplay(display_name.encode())
    if not d:
        sys.exit("bench_x11_paint: cannot open X display " + display_name)
    root = x.XDefaultRootWindow(d)
    gc = x.XCreateGC(d, root, 0, None)

    def put(src_row, dst_row, rows):
        data = ctypes.create_string_buffer(doubled[src_row * W * 4:(src_row + rows) * W * 4], rows * W * 4)
        image = x.XCreateImage(d, x.XDefaultVisual(d, 0), x.XDefaultDepth(d, 0), 2, 0, ctypes.addressof(data), W, rows, 32, W * 4)
        x.XPutImage(d, root, gc, image, 0, 0, 0, dst_row, W, rows)
        x.XSync(d, 0)  # the pixels are this function's buffer (the XImage struct itself is left: a few bytes)

    put(0, 0, H)
    if mode != "scroll":
        return
    shift = 0
    while True:
        time.sleep(0.1)
        shift = (shift + STEP) % H
        x.XCopyArea(d, root, root, gc, 0, STEP, W, H - STEP, 0, 0)
        put((shift + H - STEP) % H, H - STEP, STEP)


if __name__ == "__main__":
    main()
