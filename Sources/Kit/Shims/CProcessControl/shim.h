// prctl(2) is variadic, which Swift cannot call: one static inline wrapper per use.
#include <sys/prctl.h>
#include <signal.h>

/// Orphaned descendants are re-parented to this process instead of init (PR_SET_CHILD_SUBREAPER).
static inline int ocn_set_child_subreaper(void) { return prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); }

/// `sig` is delivered to this process when its parent thread exits (PR_SET_PDEATHSIG).
static inline int ocn_set_parent_death_signal(int sig) { return prctl(PR_SET_PDEATHSIG, sig, 0, 0, 0); }

#include <sys/syscall.h>
#include <unistd.h>
#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

/// A descriptor that becomes readable when process `pid` exits (pidfd_open(2), Linux 5.3): waiting
/// for a child with a deadline is then one poll(2), not a sleep loop. -1 with errno when unsupported.
/// syscall(2) is variadic, hence the wrapper.
static inline int ocn_pidfd_open(pid_t pid) { return (int)syscall(SYS_pidfd_open, pid, 0); }

/// An anonymous file in memory (memfd_create(2), close-on-exec), for pages shared with a child
/// process that is given the descriptor. -1 with errno on failure.
static inline int ocn_memfd_create(const char *name) { return (int)syscall(SYS_memfd_create, name, 1u /* MFD_CLOEXEC */); }
