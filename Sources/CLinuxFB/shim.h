// Linux framebuffer (fbdev) UAPI. ioctl is variadic and FBIOGET_* are macros, so Swift calls these
// typed wrappers instead. They return ioctl's result (-1 with errno set on failure).
#include <linux/fb.h>
#include <sys/ioctl.h>

static inline int clinuxfb_get_vscreeninfo(int fd, struct fb_var_screeninfo *info) {
    return ioctl(fd, FBIOGET_VSCREENINFO, info);
}

static inline int clinuxfb_get_fscreeninfo(int fd, struct fb_fix_screeninfo *info) {
    return ioctl(fd, FBIOGET_FSCREENINFO, info);
}
