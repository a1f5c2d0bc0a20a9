// Signals turned into bytes on a pipe (the self-pipe trick). The handler does nothing but write(2),
// which is async-signal-safe, so any thread may take the signal whatever its mask; a thread of the
// daemon reads the pipe and does the real work outside signal context. Swift code cannot be a
// signal handler safely (a first access to a Swift global runs an initializer), hence C.
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

// Header-only: every Swift object file that uses one of these functions gets its own copy of this
// variable and of the handler (release builds split a module into several), so the variable is
// only ever set where the handler's address is taken (csignals_route), never by another function.
static int csignals_write_fd = -1;

static inline void csignals_handler(int sig) {
    int saved = errno;
    unsigned char byte = (unsigned char)sig;
    // A full pipe drops the byte: the reader is behind and has this signal queued already.
    ssize_t ignored = write(csignals_write_fd, &byte, 1);
    (void)ignored;
    errno = saved;
}

// Makes the pipe (both ends close-on-exec, the write end non-blocking): fds[0] is read, fds[1]
// is for csignals_route. 0, or -1 with errno set. Call once, before routing any signal.
static inline int csignals_open_pipe(int fds[2]) {
    if (pipe(fds) != 0) return -1;
    fcntl(fds[0], F_SETFD, FD_CLOEXEC);
    fcntl(fds[1], F_SETFD, FD_CLOEXEC);
    fcntl(fds[1], F_SETFL, fcntl(fds[1], F_GETFL) | O_NONBLOCK);
    return 0;
}

// Routes `sig` to the pipe's write end. Interrupted system calls restart; a child's exec resets the
// handler to the default action (unlike SIG_IGN, which a child would inherit).
static inline int csignals_route(int sig, int write_fd) {
    csignals_write_fd = write_fd;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = csignals_handler;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    return sigaction(sig, &sa, NULL);
}
