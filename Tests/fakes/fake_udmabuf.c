/* A stand-in for the kernel's /dev/udmabuf, for tests on machines without a dma-buf provider
 * (no /dev/dma_heap, no udmabuf module): libcamera allocates its frame buffers from one, and
 * its virtual test camera then writes into them. LD_PRELOAD it into the node:
 *   - open("/dev/udmabuf") gives a placeholder descriptor (a memfd);
 *   - UDMABUF_CREATE on it answers with a duplicate of the sealed memfd the caller passes, which
 *     then stands in for the dma-buf (mmap and lseek work on it as on a dma-buf);
 *   - DMA_BUF_IOCTL_SYNC, which a memfd does not know, succeeds.
 * On a real Raspberry Pi the CMA heap exists and nothing is faked. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/dma-buf.h>
#include <linux/udmabuf.h>
#include <stdarg.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

static int placeholder = -1;

static int fake_udmabuf(void) {
    if (placeholder < 0) placeholder = memfd_create("fake-udmabuf", MFD_CLOEXEC);
    return placeholder < 0 ? -1 : fcntl(placeholder, F_DUPFD_CLOEXEC, 3);
}

static int is_udmabuf(const char *path) { return path && strcmp(path, "/dev/udmabuf") == 0; }

int open(const char *path, int flags, ...) {
    static int (*real)(const char *, int, ...);
    if (!real) real = dlsym(RTLD_NEXT, "open");
    if (is_udmabuf(path)) return fake_udmabuf();
    va_list ap; va_start(ap, flags); mode_t mode = va_arg(ap, mode_t); va_end(ap);
    return real(path, flags, mode);
}

int open64(const char *path, int flags, ...) {
    static int (*real)(const char *, int, ...);
    if (!real) real = dlsym(RTLD_NEXT, "open64");
    if (is_udmabuf(path)) return fake_udmabuf();
    va_list ap; va_start(ap, flags); mode_t mode = va_arg(ap, mode_t); va_end(ap);
    return real(path, flags, mode);
}

int openat(int dir, const char *path, int flags, ...) {
    static int (*real)(int, const char *, int, ...);
    if (!real) real = dlsym(RTLD_NEXT, "openat");
    if (is_udmabuf(path)) return fake_udmabuf();
    va_list ap; va_start(ap, flags); mode_t mode = va_arg(ap, mode_t); va_end(ap);
    return real(dir, path, flags, mode);
}

int ioctl(int fd, unsigned long request, ...) {
    static int (*real)(int, unsigned long, ...);
    if (!real) real = dlsym(RTLD_NEXT, "ioctl");
    va_list ap; va_start(ap, request); void *arg = va_arg(ap, void *); va_end(ap);
    if (request == UDMABUF_CREATE) {
        struct udmabuf_create *c = arg;
        return fcntl((int)c->memfd, F_DUPFD_CLOEXEC, 3);
    }
    int rc = real(fd, request, arg);
    if (rc < 0 && request == DMA_BUF_IOCTL_SYNC && (errno == ENOTTY || errno == EINVAL)) return 0;
    return rc;
}
