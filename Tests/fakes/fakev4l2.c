// LD_PRELOAD fake of V4L2 capture devices, for tests on machines without /dev/video* (the kernel
// here has no media subsystem, and vivid/v4l2loopback cannot be loaded).
//
// Design: the tests create ordinary placeholder files (e.g. $TMP/dev/video0) and point the node's
// capabilities.camera.deviceDir at their directory, so enumeration needs no hooks. open()/openat()
// of a configured path returns a memfd that stands for the device; ioctl() on it answers like the
// V4L2 kernel driver. Because the descriptor is a real memfd, mmap() at the QUERYBUF offsets and
// poll()/select() (always readable) work without hooks, for the node and for ffmpeg's v4l2 input.
//
// Settings (environment):
//   OCN_FAKE_V4L2="PATH:FMT[,FMT]:WxH[,WxH][:CTRL=V[,CTRL=V]][;PATH:...]"   FMT is YUYV, NV12 or MJPG
//   (NV12 rows are padded to a multiple of 64 bytes, as ISP drivers such as the Raspberry Pi's do,
//   so a reader that ignores bytesperline gets a sheared picture)
//   CTRL is exposure_auto (V4L2_CID_EXPOSURE_AUTO, a menu: 0 auto, 1 manual, 2 shutter priority,
//   3 aperture priority — what UVC webcams start in), autogain or auto_white_balance (booleans),
//   V its current value: the device answers VIDIOC_QUERYCTRL/G_CTRL/S_CTRL for those, like a UVC
//   webcam; without any it has no controls at all (EINVAL), like a capture card or test source
//   OCN_FAKE_V4L2_GONE_AFTER=N   DQBUF fails with ENODEV after N frames (device unplugged)
//   OCN_FAKE_V4L2_FPS=N          frame rate DQBUF and poll() pace to (default 30)
//   OCN_FAKE_V4L2_CORRUPT=N      the first N frames after each STREAMON are zeros flagged
//                                V4L2_BUF_FLAG_ERROR, as UVC drivers deliver a damaged transfer
// Busy: REQBUFS with count > 0 takes flock(LOCK_EX|LOCK_NB) on the placeholder file, so a second
// process streaming from the same device gets EBUSY, as from a real driver.
//
// The picture (tests recompute it, see fakev4l2_rgb): four quadrants, top-left red, top-right
// green, bottom-left blue, bottom-right white, with a black centre square of width/8; the top
// eighth of the image is grey with a black bar of width/16 that moves 8 px right per frame.
//
// Build: cc -shared -fPIC -O2 -o libfakev4l2.so fakev4l2.c -ldl -lturbojpeg -lpthread
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/videodev2.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <turbojpeg.h>
#include <unistd.h>

#define MAX_DEVICES 4
#define MAX_FORMATS 2
#define MAX_SIZES 4
#define MAX_OPEN 16
#define MAX_BUFFERS 8
#define NCONTROLS 3

// The controls a device may offer, in ascending id order (V4L2_CTRL_FLAG_NEXT_CTRL walks them so).
static const struct { const char *name; uint32_t id; uint32_t type; int max; } control_kinds[NCONTROLS] = {
    { "auto_white_balance", V4L2_CID_AUTO_WHITE_BALANCE, V4L2_CTRL_TYPE_BOOLEAN, 1 },
    { "autogain", V4L2_CID_AUTOGAIN, V4L2_CTRL_TYPE_BOOLEAN, 1 },
    { "exposure_auto", V4L2_CID_EXPOSURE_AUTO, V4L2_CTRL_TYPE_MENU, V4L2_EXPOSURE_APERTURE_PRIORITY },
};

struct device {
    char path[256];
    int nformats, nsizes;
    uint32_t formats[MAX_FORMATS];
    int widths[MAX_SIZES], heights[MAX_SIZES];
    int has_control[NCONTROLS], control_value[NCONTROLS];
};

struct handle {
    int fd;  // the memfd handed out as the device descriptor; -1 = free slot
    int lock_fd;  // placeholder file held with flock while buffers are allocated
    struct device *dev;
    uint32_t pixfmt;
    int width, height;
    uint32_t sizeimage;
    int nbuffers, streaming;
    int queued[MAX_BUFFERS], queue_len;
    uint32_t bytesused[MAX_BUFFERS];
    uint32_t sequence;
    uint32_t since_streamon;  // frames delivered since the last STREAMON (OCN_FAKE_V4L2_CORRUPT)
    struct timespec next_frame;
};

static pthread_once_t once = PTHREAD_ONCE_INIT;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct device devices[MAX_DEVICES];
static int ndevices;
static struct handle handles[MAX_OPEN];
static int gone_after = -1, fps = 30, corrupt_frames = 0;

static int (*real_open)(const char *, int, ...);
static int (*real_openat)(int, const char *, int, ...);
static int (*real_close)(int);
static int (*real_ioctl)(int, unsigned long, ...);

static void parse_device(char *spec) {
    if (ndevices == MAX_DEVICES) return;
    struct device *d = &devices[ndevices];
    char *path = strtok(spec, ":"), *fmts = strtok(NULL, ":"), *sizes = strtok(NULL, ":"), *ctrls = strtok(NULL, ":");
    if (!path || !fmts || !sizes) return;
    snprintf(d->path, sizeof d->path, "%s", path);
    for (char *f = strtok(fmts, ","); f && d->nformats < MAX_FORMATS; f = strtok(NULL, ","))
        d->formats[d->nformats++] = strcmp(f, "MJPG") == 0 ? V4L2_PIX_FMT_MJPEG
                                  : strcmp(f, "NV12") == 0 ? V4L2_PIX_FMT_NV12 : V4L2_PIX_FMT_YUYV;
    for (char *s = sizes, *next; s && *s && d->nsizes < MAX_SIZES; s = next) {
        next = strchr(s, ',');
        if (next) *next++ = 0;
        if (sscanf(s, "%dx%d", &d->widths[d->nsizes], &d->heights[d->nsizes]) == 2) d->nsizes++;
    }
    for (char *c = ctrls, *next; c && *c; c = next) {
        next = strchr(c, ',');
        if (next) *next++ = 0;
        char *eq = strchr(c, '=');
        if (!eq) continue;
        *eq = 0;
        for (int k = 0; k < NCONTROLS; k++)
            if (strcmp(c, control_kinds[k].name) == 0) { d->has_control[k] = 1; d->control_value[k] = atoi(eq + 1); }
    }
    ndevices++;
}

static void init(void) {
    real_open = dlsym(RTLD_NEXT, "open");
    real_openat = dlsym(RTLD_NEXT, "openat");
    real_close = dlsym(RTLD_NEXT, "close");
    real_ioctl = dlsym(RTLD_NEXT, "ioctl");
    for (int i = 0; i < MAX_OPEN; i++) handles[i].fd = -1;
    const char *g = getenv("OCN_FAKE_V4L2_GONE_AFTER");
    if (g && *g) gone_after = atoi(g);
    const char *f = getenv("OCN_FAKE_V4L2_FPS");
    if (f && atoi(f) > 0) fps = atoi(f);
    const char *c = getenv("OCN_FAKE_V4L2_CORRUPT");
    if (c && *c) corrupt_frames = atoi(c);
    const char *cfg = getenv("OCN_FAKE_V4L2");
    if (!cfg) return;
    char *copy = strdup(cfg), *save = NULL;
    for (char *spec = strtok_r(copy, ";", &save); spec; spec = strtok_r(NULL, ";", &save)) {
        char *one = strdup(spec);
        parse_device(one);
        free(one);
    }
    free(copy);
}

static struct device *device_for(const char *path) {
    pthread_once(&once, init);
    if (!path) return NULL;
    for (int i = 0; i < ndevices; i++)
        if (strcmp(devices[i].path, path) == 0) return &devices[i];
    return NULL;
}

static struct handle *handle_for(int fd) {
    pthread_once(&once, init);
    if (fd < 0) return NULL;
    for (int i = 0; i < MAX_OPEN; i++)
        if (handles[i].fd == fd) return &handles[i];
    return NULL;
}

static int open_fake(struct device *d, int flags) {
    int fd = memfd_create("fakev4l2", (flags & O_CLOEXEC) ? MFD_CLOEXEC : 0);
    if (fd < 0) return -1;
    if (flags & O_NONBLOCK) fcntl(fd, F_SETFL, O_NONBLOCK);
    pthread_mutex_lock(&lock);
    for (int i = 0; i < MAX_OPEN; i++) {
        if (handles[i].fd != -1) continue;
        memset(&handles[i], 0, sizeof handles[i]);
        handles[i].fd = fd;
        handles[i].lock_fd = -1;
        handles[i].dev = d;
        handles[i].pixfmt = d->formats[0];
        handles[i].width = d->widths[0];
        handles[i].height = d->heights[0];
        pthread_mutex_unlock(&lock);
        return fd;
    }
    pthread_mutex_unlock(&lock);
    real_close(fd);
    errno = EMFILE;
    return -1;
}

// ---- the picture -------------------------------------------------------------------------------

static void fakev4l2_rgb(int x, int y, int w, int h, uint32_t frame, uint8_t rgb[3]) {
    if (y < h / 8) {
        int bar = w / 16, pos = (int)((frame * 8) % (uint32_t)w);
        int v = (x >= pos && x < pos + bar) ? 0 : 128;
        rgb[0] = rgb[1] = rgb[2] = (uint8_t)v;
        return;
    }
    int cx = w / 2, cy = h / 2, half = w / 16;
    if (x >= cx - half && x < cx + half && y >= cy - half && y < cy + half) { rgb[0] = rgb[1] = rgb[2] = 0; return; }
    int right = x >= cx, bottom = y >= cy;
    rgb[0] = (!right && !bottom) || (right && bottom) ? 255 : 0;
    rgb[1] = right ? 255 : 0;
    rgb[2] = bottom ? 255 : 0;
}

static uint8_t clamp8(int v) { return v < 0 ? 0 : v > 255 ? 255 : (uint8_t)v; }

// BT.601 limited range, what V4L2 YUYV means by default and what libswscale assumes.
static void rgb_to_yuv(const uint8_t *p, int *y, int *u, int *v) {
    *y = (66 * p[0] + 129 * p[1] + 25 * p[2] + 128) / 256 + 16;
    *u = (-38 * p[0] - 74 * p[1] + 112 * p[2] + 128) / 256 + 128;
    *v = (112 * p[0] - 94 * p[1] - 18 * p[2] + 128) / 256 + 128;
}

static uint32_t fill_yuyv(uint8_t *out, int w, int h, uint32_t frame) {
    for (int y = 0; y < h; y++) {
        uint8_t *row = out + (size_t)y * w * 2;
        for (int x = 0; x < w; x += 2) {
            uint8_t a[3], b[3];
            int y0, u0, v0, y1, u1, v1;
            fakev4l2_rgb(x, y, w, h, frame, a);
            fakev4l2_rgb(x + 1, y, w, h, frame, b);
            rgb_to_yuv(a, &y0, &u0, &v0);
            rgb_to_yuv(b, &y1, &u1, &v1);
            row[x * 2] = clamp8(y0);
            row[x * 2 + 1] = clamp8((u0 + u1) / 2);
            row[x * 2 + 2] = clamp8(y1);
            row[x * 2 + 3] = clamp8((v0 + v1) / 2);
        }
    }
    return (uint32_t)(w * h * 2);
}

static uint32_t nv12_stride(int w) { return ((uint32_t)w + 63) & ~63u; }

// Y plane (stride nv12_stride), then U/V interleaved at half resolution with the same stride.
static uint32_t fill_nv12(uint8_t *out, int w, int h, uint32_t frame) {
    uint32_t stride = nv12_stride(w);
    uint8_t *uv = out + (size_t)stride * h;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            uint8_t p[3];
            int yy, u, v;
            fakev4l2_rgb(x, y, w, h, frame, p);
            rgb_to_yuv(p, &yy, &u, &v);
            out[(size_t)y * stride + x] = clamp8(yy);
            if (y % 2 == 0 && x % 2 == 0) {
                uv[(size_t)(y / 2) * stride + x] = clamp8(u);
                uv[(size_t)(y / 2) * stride + x + 1] = clamp8(v);
            }
        }
    return stride * (uint32_t)h * 3 / 2;
}

static uint32_t fill_mjpeg(uint8_t *out, uint32_t capacity, int w, int h, uint32_t frame) {
    uint8_t *rgb = malloc((size_t)w * h * 3);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) fakev4l2_rgb(x, y, w, h, frame, rgb + ((size_t)y * w + x) * 3);
    tjhandle tj = tjInitCompress();
    unsigned char *jpeg = out;
    unsigned long size = capacity;
    int rc = tjCompress2(tj, rgb, w, 0, h, TJPF_RGB, &jpeg, &size, TJSAMP_422, 95, TJFLAG_NOREALLOC);
    tjDestroy(tj);
    free(rgb);
    return rc == 0 ? (uint32_t)size : 0;
}

// ---- ioctls ------------------------------------------------------------------------------------

static int fail(int e) { errno = e; return -1; }

// The index in control_kinds of the device's control `id`, or -1 (the device does not have it).
static int control_index(struct device *d, uint32_t id) {
    for (int k = 0; k < NCONTROLS; k++)
        if (control_kinds[k].id == id && d->has_control[k]) return k;
    return -1;
}

static int query_control(struct device *d, struct v4l2_queryctrl *q) {
    int k = -1;
    if (q->id & V4L2_CTRL_FLAG_NEXT_CTRL) {
        uint32_t after = q->id & ~(V4L2_CTRL_FLAG_NEXT_CTRL | V4L2_CTRL_FLAG_NEXT_COMPOUND);
        for (int i = 0; i < NCONTROLS && k < 0; i++)
            if (d->has_control[i] && control_kinds[i].id > after) k = i;
    } else {
        k = control_index(d, q->id);
    }
    if (k < 0) return fail(EINVAL);
    memset(q, 0, sizeof *q);
    q->id = control_kinds[k].id;
    q->type = control_kinds[k].type;
    snprintf((char *)q->name, sizeof q->name, "%s", control_kinds[k].name);
    q->minimum = 0;
    q->maximum = control_kinds[k].max;
    q->step = 1;
    q->default_value = control_kinds[k].type == V4L2_CTRL_TYPE_MENU ? V4L2_EXPOSURE_APERTURE_PRIORITY : 1;
    return 0;
}

static int size_supported(struct device *d, int w, int h) {
    for (int i = 0; i < d->nsizes; i++)
        if (d->widths[i] == w && d->heights[i] == h) return 1;
    return 0;
}

static void describe_format(struct handle *hd, struct v4l2_pix_format *pix) {
    memset(pix, 0, sizeof *pix);
    pix->width = hd->width;
    pix->height = hd->height;
    pix->pixelformat = hd->pixfmt;
    pix->field = V4L2_FIELD_NONE;
    pix->bytesperline = hd->pixfmt == V4L2_PIX_FMT_YUYV ? hd->width * 2
                      : hd->pixfmt == V4L2_PIX_FMT_NV12 ? nv12_stride(hd->width) : 0;
    // MJPEG buffers are sized for the worst case, like real UVC drivers do.
    pix->sizeimage = hd->pixfmt == V4L2_PIX_FMT_NV12 ? nv12_stride(hd->width) * hd->height * 3 / 2
                   : hd->width * hd->height * 2 + (hd->pixfmt == V4L2_PIX_FMT_MJPEG ? 65536 : 0);
    pix->colorspace = hd->pixfmt == V4L2_PIX_FMT_MJPEG ? V4L2_COLORSPACE_JPEG : V4L2_COLORSPACE_SMPTE170M;
}

static void release_buffers(struct handle *hd) {
    hd->nbuffers = 0;
    hd->queue_len = 0;
    hd->streaming = 0;
    ftruncate(hd->fd, 0);
    if (hd->lock_fd >= 0) { real_close(hd->lock_fd); hd->lock_fd = -1; }
}

// Nanoseconds until the next frame is due (0 = one is ready now).
static long long frame_due_in(struct handle *hd) {
    if (hd->next_frame.tv_sec == 0) return 0;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    long long d = (long long)(hd->next_frame.tv_sec - now.tv_sec) * 1000000000LL + (hd->next_frame.tv_nsec - now.tv_nsec);
    return d > 0 ? d : 0;
}

static void wait_for_frame(struct handle *hd) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (hd->next_frame.tv_sec == 0) hd->next_frame = now;
    clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &hd->next_frame, NULL);
    hd->next_frame.tv_nsec += 1000000000L / fps;
    while (hd->next_frame.tv_nsec >= 1000000000L) { hd->next_frame.tv_nsec -= 1000000000L; hd->next_frame.tv_sec++; }
    // Never build up a backlog: a slow reader gets the current frame, not a burst of old ones.
    if (hd->next_frame.tv_sec < now.tv_sec) hd->next_frame = now;
}

static int fake_ioctl(struct handle *hd, unsigned long request, void *arg) {
    struct device *d = hd->dev;
    switch (request) {
    case VIDIOC_QUERYCAP: {
        struct v4l2_capability *c = arg;
        memset(c, 0, sizeof *c);
        snprintf((char *)c->driver, sizeof c->driver, "fakev4l2");
        snprintf((char *)c->card, sizeof c->card, "Fake Camera %d", (int)(d - devices));
        snprintf((char *)c->bus_info, sizeof c->bus_info, "platform:fakev4l2-%d", (int)(d - devices));
        c->version = 0x060100;
        c->device_caps = V4L2_CAP_VIDEO_CAPTURE | V4L2_CAP_STREAMING;
        c->capabilities = c->device_caps | V4L2_CAP_DEVICE_CAPS;
        return 0;
    }
    case VIDIOC_ENUM_FMT: {
        struct v4l2_fmtdesc *f = arg;
        if (f->type != V4L2_BUF_TYPE_VIDEO_CAPTURE || f->index >= (uint32_t)d->nformats) return fail(EINVAL);
        uint32_t index = f->index;
        memset(f, 0, sizeof *f);
        f->index = index;
        f->type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
        f->pixelformat = d->formats[index];
        f->flags = f->pixelformat == V4L2_PIX_FMT_MJPEG ? V4L2_FMT_FLAG_COMPRESSED : 0;
        snprintf((char *)f->description, sizeof f->description, "%s",
                 f->pixelformat == V4L2_PIX_FMT_MJPEG ? "Motion-JPEG"
                 : f->pixelformat == V4L2_PIX_FMT_NV12 ? "Y/UV 4:2:0" : "YUYV 4:2:2");
        return 0;
    }
    case VIDIOC_ENUM_FRAMESIZES: {
        struct v4l2_frmsizeenum *s = arg;
        int known = 0;
        for (int i = 0; i < d->nformats; i++) known |= d->formats[i] == s->pixel_format;
        if (!known || s->index >= (uint32_t)d->nsizes) return fail(EINVAL);
        s->type = V4L2_FRMSIZE_TYPE_DISCRETE;
        s->discrete.width = d->widths[s->index];
        s->discrete.height = d->heights[s->index];
        return 0;
    }
    case VIDIOC_ENUM_FRAMEINTERVALS: {
        struct v4l2_frmivalenum *iv = arg;
        if (iv->index > 0 || !size_supported(d, iv->width, iv->height)) return fail(EINVAL);
        iv->type = V4L2_FRMIVAL_TYPE_DISCRETE;
        iv->discrete.numerator = 1;
        iv->discrete.denominator = fps;
        return 0;
    }
    case VIDIOC_G_FMT: {
        struct v4l2_format *f = arg;
        if (f->type != V4L2_BUF_TYPE_VIDEO_CAPTURE) return fail(EINVAL);
        describe_format(hd, &f->fmt.pix);
        return 0;
    }
    case VIDIOC_TRY_FMT:
    case VIDIOC_S_FMT: {
        struct v4l2_format *f = arg;
        if (f->type != V4L2_BUF_TYPE_VIDEO_CAPTURE) return fail(EINVAL);
        if (request == VIDIOC_S_FMT && hd->nbuffers > 0) return fail(EBUSY);
        struct handle tmp = *hd;
        // Like drivers, adjust to something supported instead of failing.
        tmp.pixfmt = d->formats[0];
        for (int i = 0; i < d->nformats; i++)
            if (d->formats[i] == f->fmt.pix.pixelformat) tmp.pixfmt = f->fmt.pix.pixelformat;
        if (size_supported(d, f->fmt.pix.width, f->fmt.pix.height)) {
            tmp.width = f->fmt.pix.width;
            tmp.height = f->fmt.pix.height;
        } else {
            tmp.width = d->widths[0];
            tmp.height = d->heights[0];
        }
        describe_format(&tmp, &f->fmt.pix);
        if (request == VIDIOC_S_FMT) *hd = tmp;
        return 0;
    }
    case VIDIOC_G_PARM:
    case VIDIOC_S_PARM: {
        struct v4l2_streamparm *p = arg;
        if (p->type != V4L2_BUF_TYPE_VIDEO_CAPTURE) return fail(EINVAL);
        memset(&p->parm, 0, sizeof p->parm);
        p->parm.capture.capability = V4L2_CAP_TIMEPERFRAME;
        p->parm.capture.timeperframe.numerator = 1;
        p->parm.capture.timeperframe.denominator = fps;
        return 0;
    }
    case VIDIOC_ENUMINPUT: {
        struct v4l2_input *in = arg;
        if (in->index > 0) return fail(EINVAL);
        memset(in, 0, sizeof *in);
        snprintf((char *)in->name, sizeof in->name, "Camera");
        in->type = V4L2_INPUT_TYPE_CAMERA;
        return 0;
    }
    case VIDIOC_QUERYCTRL: return query_control(d, arg);
    case VIDIOC_G_CTRL:
    case VIDIOC_S_CTRL: {
        struct v4l2_control *c = arg;
        int k = control_index(d, c->id);
        if (k < 0) return fail(EINVAL);
        if (request == VIDIOC_G_CTRL) { c->value = d->control_value[k]; return 0; }
        if (c->value < 0 || c->value > control_kinds[k].max) return fail(ERANGE);
        d->control_value[k] = c->value;
        return 0;
    }
    case VIDIOC_G_INPUT: *(int *)arg = 0; return 0;
    case VIDIOC_S_INPUT: return *(int *)arg == 0 ? 0 : fail(EINVAL);
    case VIDIOC_REQBUFS: {
        struct v4l2_requestbuffers *r = arg;
        if (r->type != V4L2_BUF_TYPE_VIDEO_CAPTURE || r->memory != V4L2_MEMORY_MMAP) return fail(EINVAL);
        if (hd->streaming) return fail(EBUSY);
        if (r->count == 0) { release_buffers(hd); return 0; }
        if (hd->lock_fd < 0) {
            int lf = real_open(d->path, O_RDONLY | O_CLOEXEC);
            if (lf >= 0 && flock(lf, LOCK_EX | LOCK_NB) != 0) { real_close(lf); return fail(EBUSY); }
            hd->lock_fd = lf;
        }
        if (r->count > MAX_BUFFERS) r->count = MAX_BUFFERS;
        struct v4l2_pix_format pix;
        describe_format(hd, &pix);
        hd->sizeimage = pix.sizeimage;
        hd->nbuffers = r->count;
        hd->queue_len = 0;
        long page = sysconf(_SC_PAGESIZE);
        hd->sizeimage = (uint32_t)((hd->sizeimage + page - 1) / page * page);
        if (ftruncate(hd->fd, (off_t)hd->sizeimage * hd->nbuffers) != 0) return -1;
        r->capabilities = V4L2_BUF_CAP_SUPPORTS_MMAP;
        return 0;
    }
    case VIDIOC_QUERYBUF: {
        struct v4l2_buffer *b = arg;
        if (b->type != V4L2_BUF_TYPE_VIDEO_CAPTURE || b->index >= (uint32_t)hd->nbuffers) return fail(EINVAL);
        uint32_t index = b->index;
        memset(b, 0, sizeof *b);
        b->index = index;
        b->type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
        b->memory = V4L2_MEMORY_MMAP;
        b->length = hd->sizeimage;
        b->m.offset = index * hd->sizeimage;
        b->flags = V4L2_BUF_FLAG_TIMESTAMP_MONOTONIC;
        for (int i = 0; i < hd->queue_len; i++)
            if (hd->queued[i] == (int)index) b->flags |= V4L2_BUF_FLAG_QUEUED;
        return 0;
    }
    case VIDIOC_QBUF: {
        struct v4l2_buffer *b = arg;
        if (b->type != V4L2_BUF_TYPE_VIDEO_CAPTURE || b->index >= (uint32_t)hd->nbuffers) return fail(EINVAL);
        for (int i = 0; i < hd->queue_len; i++)
            if (hd->queued[i] == (int)b->index) return fail(EINVAL);
        hd->queued[hd->queue_len++] = b->index;
        b->flags |= V4L2_BUF_FLAG_QUEUED;
        return 0;
    }
    case VIDIOC_DQBUF: {
        struct v4l2_buffer *b = arg;
        if (b->type != V4L2_BUF_TYPE_VIDEO_CAPTURE) return fail(EINVAL);
        if (!hd->streaming) return fail(EINVAL);
        if (gone_after >= 0 && hd->sequence >= (uint32_t)gone_after) return fail(ENODEV);
        if (hd->queue_len == 0) return fail(EAGAIN);
        // A non-blocking reader gets EAGAIN until the frame is "captured", like from a driver.
        if ((fcntl(hd->fd, F_GETFL) & O_NONBLOCK) && frame_due_in(hd) > 0) return fail(EAGAIN);
        wait_for_frame(hd);
        int index = hd->queued[0];
        memmove(hd->queued, hd->queued + 1, sizeof(int) * --hd->queue_len);
        uint8_t *mem = mmap(NULL, hd->sizeimage, PROT_READ | PROT_WRITE, MAP_SHARED, hd->fd, (off_t)index * hd->sizeimage);
        if (mem == MAP_FAILED) return -1;
        int corrupt = hd->since_streamon++ < (uint32_t)corrupt_frames;
        uint32_t used = corrupt ? (memset(mem, 0, hd->sizeimage / 2), hd->sizeimage / 2)
            : hd->pixfmt == V4L2_PIX_FMT_MJPEG
            ? fill_mjpeg(mem, hd->sizeimage, hd->width, hd->height, hd->sequence)
            : hd->pixfmt == V4L2_PIX_FMT_NV12 ? fill_nv12(mem, hd->width, hd->height, hd->sequence)
            : fill_yuyv(mem, hd->width, hd->height, hd->sequence);
        munmap(mem, hd->sizeimage);
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        memset(b, 0, sizeof *b);
        b->index = index;
        b->type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
        b->memory = V4L2_MEMORY_MMAP;
        b->bytesused = used;
        b->length = hd->sizeimage;
        b->m.offset = index * hd->sizeimage;
        b->field = V4L2_FIELD_NONE;
        b->sequence = hd->sequence++;
        b->flags = V4L2_BUF_FLAG_TIMESTAMP_MONOTONIC | V4L2_BUF_FLAG_MAPPED | (corrupt ? V4L2_BUF_FLAG_ERROR : 0);
        b->timestamp.tv_sec = now.tv_sec;
        b->timestamp.tv_usec = now.tv_nsec / 1000;
        return 0;
    }
    case VIDIOC_STREAMON:
        if (*(int *)arg != V4L2_BUF_TYPE_VIDEO_CAPTURE || hd->nbuffers == 0) return fail(EINVAL);
        hd->streaming = 1;
        hd->since_streamon = 0;
        hd->next_frame.tv_sec = 0;
        return 0;
    case VIDIOC_STREAMOFF:
        if (*(int *)arg != V4L2_BUF_TYPE_VIDEO_CAPTURE) return fail(EINVAL);
        hd->streaming = 0;
        hd->queue_len = 0;
        return 0;
    default:
        // Extended controls, standards, crop…: a camera without them.
        return fail(ENOTTY);
    }
}

// ---- hooks -------------------------------------------------------------------------------------

static int is_fake(const char *path) { return device_for(path) != NULL; }

int open(const char *path, int flags, ...) {
    mode_t mode = 0;
    if (flags & (O_CREAT | O_TMPFILE)) { va_list ap; va_start(ap, flags); mode = va_arg(ap, mode_t); va_end(ap); }
    struct device *d = device_for(path);
    if (d) return open_fake(d, flags);
    return real_open(path, flags, mode);
}

int open64(const char *path, int flags, ...) __attribute__((alias("open")));

int openat(int dirfd, const char *path, int flags, ...) {
    mode_t mode = 0;
    if (flags & (O_CREAT | O_TMPFILE)) { va_list ap; va_start(ap, flags); mode = va_arg(ap, mode_t); va_end(ap); }
    if (is_fake(path)) return open_fake(device_for(path), flags);
    return real_openat(dirfd, path, flags, mode);
}

int openat64(int dirfd, const char *path, int flags, ...) __attribute__((alias("openat")));

int close(int fd) {
    pthread_once(&once, init);
    pthread_mutex_lock(&lock);
    struct handle *hd = handle_for(fd);
    if (hd) { release_buffers(hd); hd->fd = -1; }
    pthread_mutex_unlock(&lock);
    return real_close(fd);
}

// poll() on one streaming fake device waits for its next frame (a memfd alone is always readable).
int poll(struct pollfd *fds, nfds_t nfds, int timeout) {
    static int (*real_poll)(struct pollfd *, nfds_t, int);
    if (!real_poll) real_poll = dlsym(RTLD_NEXT, "poll");
    struct handle *hd = nfds == 1 ? handle_for(fds[0].fd) : NULL;
    if (!hd || !hd->streaming || hd->queue_len == 0) return real_poll(fds, nfds, timeout);
    long long due = frame_due_in(hd);
    if (timeout >= 0 && due > (long long)timeout * 1000000LL) {
        usleep((useconds_t)timeout * 1000);
        fds[0].revents = 0;
        return 0;
    }
    if (due > 0) {
        struct timespec ts = { due / 1000000000LL, due % 1000000000LL };
        nanosleep(&ts, NULL);
    }
    fds[0].revents = fds[0].events & (POLLIN | POLLRDNORM);
    return 1;
}

int ioctl(int fd, unsigned long request, ...) {
    va_list ap;
    va_start(ap, request);
    void *arg = va_arg(ap, void *);
    va_end(ap);
    pthread_once(&once, init);
    struct handle *hd = handle_for(fd);
    if (!hd) return real_ioctl(fd, request, arg);
    return fake_ioctl(hd, request, arg);
}
