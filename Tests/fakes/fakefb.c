// LD_PRELOAD fake of a Linux framebuffer device, for tests on machines without /dev/fb0.
//
// open()/openat() of FAKEFB_PATH (default /dev/fb0) return a descriptor of one memfd holding the
// framebuffer memory; ioctl(FBIOGET_VSCREENINFO / FBIOGET_FSCREENINFO) on it answers like the
// kernel; mmap() of it is checked against smem_len like the kernel does and then really maps the
// memfd. Everything else goes to libc.
//
// The picture is a known pattern the tests recompute (see fakefb_expected_rgb):
//   visible area = four quadrants: top-left red, top-right green, bottom-left blue,
//   bottom-right white, with a black 1/8-size square in the centre.
// To prove that readers honour the layout, the memory also holds traps: every row is padded by
// FAKEFB_PAD bytes (line_length > xres * bpp/8), and the visible area is panned to the second half
// of a double-height virtual screen (yoffset = yres); padding and the hidden half are 0xAA bytes.
//
// Settings (environment): FAKEFB_PATH, FAKEFB_WIDTH (default 320), FAKEFB_HEIGHT (240),
// FAKEFB_BPP (16 = RGB565, 24 = BGR888, 32 = XRGB8888; default 32), FAKEFB_PAD (default 64).
//
// Build: cc -shared -fPIC -O2 -o libfakefb.so fakefb.c -ldl
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/fb.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int master_fd = -1;
static ino_t master_ino;
static dev_t master_dev;
static struct fb_var_screeninfo var_info;
static struct fb_fix_screeninfo fix_info;

static int env_int(const char *name, int fallback) {
    const char *v = getenv(name);
    return v && *v ? atoi(v) : fallback;
}

static const char *fake_path(void) {
    const char *p = getenv("FAKEFB_PATH");
    return p && *p ? p : "/dev/fb0";
}

// The pattern; tests implement the same function.
static void fakefb_expected_rgb(int x, int y, int w, int h, uint8_t rgb[3]) {
    int cx = w / 2, cy = h / 2, half = w / 16;
    if (x >= cx - half && x < cx + half && y >= cy - half && y < cy + half) { rgb[0] = rgb[1] = rgb[2] = 0; return; }
    int right = x >= cx, bottom = y >= cy;
    if (!right && !bottom) { rgb[0] = 255; rgb[1] = 0; rgb[2] = 0; }
    else if (right && !bottom) { rgb[0] = 0; rgb[1] = 255; rgb[2] = 0; }
    else if (!right && bottom) { rgb[0] = 0; rgb[1] = 0; rgb[2] = 255; }
    else { rgb[0] = rgb[1] = rgb[2] = 255; }
}

static void put_pixel(uint8_t *p, int bpp, const uint8_t rgb[3]) {
    switch (bpp) {
    case 16: {
        uint16_t v = (uint16_t)(((rgb[0] >> 3) << 11) | ((rgb[1] >> 2) << 5) | (rgb[2] >> 3));
        p[0] = (uint8_t)(v & 0xff); p[1] = (uint8_t)(v >> 8);
        break;
    }
    case 24: p[0] = rgb[2]; p[1] = rgb[1]; p[2] = rgb[0]; break;
    default: p[0] = rgb[2]; p[1] = rgb[1]; p[2] = rgb[0]; p[3] = 0; break;
    }
}

static void set_field(struct fb_bitfield *f, int offset, int length) {
    f->offset = (uint32_t)offset; f->length = (uint32_t)length; f->msb_right = 0;
}

static void setup(void) {
    int w = env_int("FAKEFB_WIDTH", 320), h = env_int("FAKEFB_HEIGHT", 240);
    int bpp = env_int("FAKEFB_BPP", 32), pad = env_int("FAKEFB_PAD", 64);
    if (bpp != 16 && bpp != 24) bpp = 32;
    int line = w * bpp / 8 + pad;
    size_t size = (size_t)line * (size_t)h * 2;

    memset(&var_info, 0, sizeof var_info);
    var_info.xres = (uint32_t)w; var_info.yres = (uint32_t)h;
    var_info.xres_virtual = (uint32_t)w; var_info.yres_virtual = (uint32_t)(2 * h);
    var_info.xoffset = 0; var_info.yoffset = (uint32_t)h;
    var_info.bits_per_pixel = (uint32_t)bpp;
    if (bpp == 16) { set_field(&var_info.red, 11, 5); set_field(&var_info.green, 5, 6); set_field(&var_info.blue, 0, 5); }
    else { set_field(&var_info.red, 16, 8); set_field(&var_info.green, 8, 8); set_field(&var_info.blue, 0, 8); }
    var_info.height = var_info.width = (uint32_t)-1;

    memset(&fix_info, 0, sizeof fix_info);
    strncpy(fix_info.id, "fakefb", sizeof fix_info.id - 1);
    fix_info.smem_len = (uint32_t)size;
    fix_info.type = FB_TYPE_PACKED_PIXELS;
    fix_info.visual = FB_VISUAL_TRUECOLOR;
    fix_info.line_length = (uint32_t)line;

    int fd = memfd_create("fakefb", MFD_CLOEXEC);
    if (fd < 0 || ftruncate(fd, (off_t)size) != 0) return;
    int (*real_munmap)(void *, size_t) = munmap;
    void *(*real_mmap)(void *, size_t, int, int, int, off_t) = (void *(*)(void *, size_t, int, int, int, off_t))dlsym(RTLD_NEXT, "mmap");
    uint8_t *mem = real_mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (mem == MAP_FAILED) { close(fd); return; }
    memset(mem, 0xAA, size);
    for (int y = 0; y < h; y++) {
        uint8_t *row = mem + (size_t)(h + y) * (size_t)line;
        for (int x = 0; x < w; x++) {
            uint8_t rgb[3];
            fakefb_expected_rgb(x, y, w, h, rgb);
            put_pixel(row + x * (bpp / 8), bpp, rgb);
        }
    }
    real_munmap(mem, size);
    struct stat st;
    if (fstat(fd, &st) != 0) { close(fd); return; }
    master_ino = st.st_ino;
    master_dev = st.st_dev;
    master_fd = fd;
}

static int is_fake(int fd) {
    if (master_fd < 0 || fd < 0) return 0;
    struct stat st;
    return fstat(fd, &st) == 0 && st.st_ino == master_ino && st.st_dev == master_dev;
}

static int open_fake(int flags) {
    pthread_once(&once, setup);
    if (master_fd < 0) { errno = EIO; return -1; }
    if ((flags & O_ACCMODE) != O_RDONLY && (flags & O_ACCMODE) != O_RDWR) { errno = EACCES; return -1; }
    return fcntl(master_fd, (flags & O_CLOEXEC) ? F_DUPFD_CLOEXEC : F_DUPFD, 0);
}

static int matches(const char *path) { return path && strcmp(path, fake_path()) == 0; }

static mode_t mode_arg(int flags, va_list ap) {
    return (flags & (O_CREAT | O_TMPFILE)) ? (mode_t)va_arg(ap, int) : 0;
}

int open(const char *path, int flags, ...) {
    va_list ap; va_start(ap, flags); mode_t mode = mode_arg(flags, ap); va_end(ap);
    if (matches(path)) return open_fake(flags);
    int (*real)(const char *, int, ...) = (int (*)(const char *, int, ...))dlsym(RTLD_NEXT, "open");
    return real(path, flags, mode);
}

int open64(const char *path, int flags, ...) {
    va_list ap; va_start(ap, flags); mode_t mode = mode_arg(flags, ap); va_end(ap);
    if (matches(path)) return open_fake(flags);
    int (*real)(const char *, int, ...) = (int (*)(const char *, int, ...))dlsym(RTLD_NEXT, "open64");
    return real(path, flags, mode);
}

int openat(int dirfd, const char *path, int flags, ...) {
    va_list ap; va_start(ap, flags); mode_t mode = mode_arg(flags, ap); va_end(ap);
    if (matches(path)) return open_fake(flags);
    int (*real)(int, const char *, int, ...) = (int (*)(int, const char *, int, ...))dlsym(RTLD_NEXT, "openat");
    return real(dirfd, path, flags, mode);
}

int openat64(int dirfd, const char *path, int flags, ...) {
    va_list ap; va_start(ap, flags); mode_t mode = mode_arg(flags, ap); va_end(ap);
    if (matches(path)) return open_fake(flags);
    int (*real)(int, const char *, int, ...) = (int (*)(int, const char *, int, ...))dlsym(RTLD_NEXT, "openat64");
    return real(dirfd, path, flags, mode);
}

// _FORTIFY_SOURCE builds call these instead of open().
int __open_2(const char *path, int flags) { return open(path, flags); }
int __open64_2(const char *path, int flags) { return open64(path, flags); }

int ioctl(int fd, unsigned long request, ...) {
    va_list ap; va_start(ap, request); void *arg = va_arg(ap, void *); va_end(ap);
    if (is_fake(fd)) {
        switch (request) {
        case FBIOGET_VSCREENINFO: memcpy(arg, &var_info, sizeof var_info); return 0;
        case FBIOGET_FSCREENINFO: memcpy(arg, &fix_info, sizeof fix_info); return 0;
        default: errno = EINVAL; return -1;
        }
    }
    int (*real)(int, unsigned long, ...) = (int (*)(int, unsigned long, ...))dlsym(RTLD_NEXT, "ioctl");
    return real(fd, request, arg);
}

static void *checked_map(void *(*real)(void *, size_t, int, int, int, off_t), void *addr, size_t len, int prot,
                         int flags, int fd, off_t off) {
    // The kernel refuses mappings past the framebuffer memory.
    if (is_fake(fd) && (off < 0 || (uint64_t)off + len > fix_info.smem_len)) { errno = EINVAL; return MAP_FAILED; }
    return real(addr, len, prot, flags, fd, off);
}

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off) {
    void *(*real)(void *, size_t, int, int, int, off_t) = (void *(*)(void *, size_t, int, int, int, off_t))dlsym(RTLD_NEXT, "mmap");
    return checked_map(real, addr, len, prot, flags, fd, off);
}

void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off) {
    void *(*real)(void *, size_t, int, int, int, off_t) = (void *(*)(void *, size_t, int, int, int, off_t))dlsym(RTLD_NEXT, "mmap64");
    return checked_map(real, addr, len, prot, flags, fd, off);
}
