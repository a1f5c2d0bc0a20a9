// libwayland-client (Debian's libwayland-dev) for the Wayland screen capture and input backends.
#include <wayland-client.h>
#include <sys/syscall.h>
#include <unistd.h>

// Anonymous shared memory for wl_shm buffers (memfd_create needs _GNU_SOURCE in glibc's headers).
static inline int ocn_wl_memfd(void) { return (int)syscall(SYS_memfd_create, "openclaw-node-wl-shm", 1u /* MFD_CLOEXEC */); }

// The core interfaces are `extern const` tables, which Swift imports as values; wl_registry_bind
// needs their addresses.
static inline const struct wl_interface *ocn_wl_shm_interface(void) { return &wl_shm_interface; }
static inline const struct wl_interface *ocn_wl_output_interface(void) { return &wl_output_interface; }
static inline const struct wl_interface *ocn_wl_seat_interface(void) { return &wl_seat_interface; }
