// An ALSA capture PCM that only one program can hold at a time, as a USB microphone's hw device
// behaves (dmix/dsnoop aside): a second snd_pcm_open fails with EBUSY while the first is open.
// There is no sound hardware and no snd-aloop on the test machines, and ALSA's own `file` PCM can
// be opened any number of times, so the talk tests load this through ALSA's documented external
// plugin interface (ioplug) to see MIC_BUSY, and a device that disappears mid-capture, through the
// node's real ALSA code path.
//
//   pcm_type.exclusive { lib "/path/libasound_module_pcm_exclusive.so" }
//   pcm.busymic { type exclusive infile "speech.raw" lock "/tmp/x.lock" unplug "/tmp/x.gone" }
//
// It delivers `infile` (16 kHz mono S16_LE; silence after its end) at the real-time rate. The hold
// is an flock on `lock`; while the file `unplug` exists, reads fail with ENODEV (device gone),
// and `unplug`.seen is made the first time a reader is told so.
#include <alsa/asoundlib.h>
#include <alsa/pcm_external.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#define RATE 16000

typedef struct {
    snd_pcm_ioplug_t io;
    int data_fd;
    int lock_fd;
    int timer_fd;
    char *unplug;
    struct timespec started;
    int running;
} exclusive_t;

static snd_pcm_uframes_t elapsed_frames(exclusive_t *x) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    double s = (now.tv_sec - x->started.tv_sec) + (now.tv_nsec - x->started.tv_nsec) / 1e9;
    return (snd_pcm_uframes_t)(s * RATE);
}

static int ex_start(snd_pcm_ioplug_t *io) {
    exclusive_t *x = io->private_data;
    clock_gettime(CLOCK_MONOTONIC, &x->started);
    x->running = 1;
    return 0;
}

// Whether the device is gone (the file `unplug` exists). The first time a reader is told so,
// `unplug`.seen is created: a test waits for that instead of guessing when the reader looks.
static int gone(exclusive_t *x) {
    if (!x->unplug || access(x->unplug, F_OK) != 0) return 0;
    char seen[4096];
    snprintf(seen, sizeof seen, "%s.seen", x->unplug);
    int fd = open(seen, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (fd >= 0) close(fd);
    return 1;
}

// A recovering reader prepares the device again: a device that is gone cannot be.
static int ex_prepare(snd_pcm_ioplug_t *io) {
    return gone(io->private_data) ? -ENODEV : 0;
}

static int ex_stop(snd_pcm_ioplug_t *io) {
    ((exclusive_t *)io->private_data)->running = 0;
    return 0;
}

// The hardware position: how much real time has passed, as a hardware clock would count it.
static snd_pcm_sframes_t ex_pointer(snd_pcm_ioplug_t *io) {
    exclusive_t *x = io->private_data;
    if (gone(x)) return -ENODEV;
    if (!x->running) return 0;
    snd_pcm_uframes_t hw = elapsed_frames(x);
    // Never more than a buffer ahead of the reader: a late reader sees a full buffer, not a wrap.
    if (hw > io->appl_ptr + io->buffer_size) hw = io->appl_ptr + io->buffer_size;
    return hw % io->buffer_size;
}

static snd_pcm_sframes_t ex_transfer(snd_pcm_ioplug_t *io, const snd_pcm_channel_area_t *areas,
                                     snd_pcm_uframes_t offset, snd_pcm_uframes_t size) {
    exclusive_t *x = io->private_data;
    char *dst = (char *)areas[0].addr + (areas[0].first + areas[0].step * offset) / 8;
    size_t want = size * 2, got = 0;
    while (got < want) {
        ssize_t n = read(x->data_fd, dst + got, want - got);
        if (n <= 0) break;
        got += (size_t)n;
    }
    memset(dst + got, 0, want - got);
    return (snd_pcm_sframes_t)size;
}

static int ex_poll_revents(snd_pcm_ioplug_t *io, struct pollfd *pfd, unsigned int nfds, unsigned short *revents) {
    exclusive_t *x = io->private_data;
    uint64_t ticks;
    (void)pfd; (void)nfds;
    if (read(x->timer_fd, &ticks, sizeof ticks) < 0) { /* not yet due */ }
    *revents = POLLIN;
    return 0;
}

static int ex_close(snd_pcm_ioplug_t *io) {
    exclusive_t *x = io->private_data;
    close(x->data_fd);
    close(x->timer_fd);
    close(x->lock_fd);  // releases the hold
    free(x->unplug);
    free(x);
    return 0;
}

static const snd_pcm_ioplug_callback_t callbacks = {
    .start = ex_start, .stop = ex_stop, .prepare = ex_prepare, .pointer = ex_pointer, .transfer = ex_transfer,
    .poll_revents = ex_poll_revents, .close = ex_close,
};

SND_PCM_PLUGIN_DEFINE_FUNC(exclusive) {
    snd_config_iterator_t i, next;
    const char *infile = NULL, *lock = NULL, *unplug = NULL;
    (void)root;
    snd_config_for_each(i, next, conf) {
        snd_config_t *n = snd_config_iterator_entry(i);
        const char *id;
        if (snd_config_get_id(n, &id) < 0) continue;
        if (!strcmp(id, "comment") || !strcmp(id, "type") || !strcmp(id, "hint")) continue;
        if (!strcmp(id, "infile")) { snd_config_get_string(n, &infile); continue; }
        if (!strcmp(id, "lock")) { snd_config_get_string(n, &lock); continue; }
        if (!strcmp(id, "unplug")) { snd_config_get_string(n, &unplug); continue; }
        return -EINVAL;
    }
    if (stream != SND_PCM_STREAM_CAPTURE || !infile || !lock) return -EINVAL;
    if (unplug && access(unplug, F_OK) == 0) return -ENODEV;
    int lock_fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (lock_fd < 0) return -errno;
    if (flock(lock_fd, LOCK_EX | LOCK_NB) < 0) { close(lock_fd); return -EBUSY; }
    int data_fd = open(infile, O_RDONLY | O_CLOEXEC);
    if (data_fd < 0) { int e = errno; close(lock_fd); return -e; }
    exclusive_t *x = calloc(1, sizeof *x);
    x->data_fd = data_fd;
    x->lock_fd = lock_fd;
    x->unplug = unplug ? strdup(unplug) : NULL;
    x->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    struct itimerspec every5ms = {{0, 5000000}, {0, 5000000}};
    timerfd_settime(x->timer_fd, 0, &every5ms, NULL);
    x->io.version = SND_PCM_IOPLUG_VERSION;
    x->io.name = "exclusive test microphone";
    x->io.callback = &callbacks;
    x->io.private_data = x;
    x->io.poll_fd = x->timer_fd;
    x->io.poll_events = POLLIN;
    int err = snd_pcm_ioplug_create(&x->io, name, stream, mode);
    if (err < 0) { close(data_fd); close(lock_fd); close(x->timer_fd); free(x->unplug); free(x); return err; }
    static const unsigned int access_list[] = {SND_PCM_ACCESS_RW_INTERLEAVED};
    static const unsigned int format_list[] = {SND_PCM_FORMAT_S16_LE};
    snd_pcm_ioplug_set_param_list(&x->io, SND_PCM_IOPLUG_HW_ACCESS, 1, access_list);
    snd_pcm_ioplug_set_param_list(&x->io, SND_PCM_IOPLUG_HW_FORMAT, 1, format_list);
    snd_pcm_ioplug_set_param_minmax(&x->io, SND_PCM_IOPLUG_HW_CHANNELS, 1, 1);
    snd_pcm_ioplug_set_param_minmax(&x->io, SND_PCM_IOPLUG_HW_RATE, RATE, RATE);
    snd_pcm_ioplug_set_param_minmax(&x->io, SND_PCM_IOPLUG_HW_PERIOD_BYTES, 320, 64000);
    snd_pcm_ioplug_set_param_minmax(&x->io, SND_PCM_IOPLUG_HW_PERIODS, 2, 64);
    snd_pcm_ioplug_set_param_minmax(&x->io, SND_PCM_IOPLUG_HW_BUFFER_BYTES, 16000, 256000);
    *pcmp = x->io.pcm;
    return 0;
}

SND_PCM_PLUGIN_SYMBOL(exclusive);
