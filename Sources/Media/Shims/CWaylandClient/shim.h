// libwayland-client (Debian's libwayland-dev) for the Wayland screen capture and input backends.
#include <wayland-client.h>

// The core interfaces are `extern const` tables, which Swift imports as values; wl_registry_bind
// needs their addresses.
static inline const struct wl_interface *ocn_wl_shm_interface(void) { return &wl_shm_interface; }
static inline const struct wl_interface *ocn_wl_output_interface(void) { return &wl_output_interface; }
static inline const struct wl_interface *ocn_wl_seat_interface(void) { return &wl_seat_interface; }
