// The Wayland protocols openclaw-node speaks beyond the core one, as wayland-scanner generated
// them from protocols/*.xml (scripts/wayland-protocols): screencopy, xdg-output, virtual pointer
// and keyboard, idle notification, KWin's fake input, the data-control clipboard.
#include <wayland-client.h>
#include "wlr-screencopy-unstable-v1-client.h"
#include "xdg-output-unstable-v1-client.h"
#include "wlr-virtual-pointer-unstable-v1-client.h"
#include "virtual-keyboard-unstable-v1-client.h"
#include "kde-idle-client.h"
#include "ext-idle-notify-v1-client.h"
#include "kde-fake-input-client.h"
#include "wlr-data-control-unstable-v1-client.h"

// Addresses of the generated interface tables, for wl_registry_bind (Swift sees them as values).
static inline const struct wl_interface *ocn_screencopy_manager_interface(void) { return &zwlr_screencopy_manager_v1_interface; }
static inline const struct wl_interface *ocn_xdg_output_manager_interface(void) { return &zxdg_output_manager_v1_interface; }
static inline const struct wl_interface *ocn_virtual_pointer_manager_interface(void) { return &zwlr_virtual_pointer_manager_v1_interface; }
static inline const struct wl_interface *ocn_virtual_keyboard_manager_interface(void) { return &zwp_virtual_keyboard_manager_v1_interface; }
static inline const struct wl_interface *ocn_kde_idle_interface(void) { return &org_kde_kwin_idle_interface; }
static inline const struct wl_interface *ocn_idle_notifier_interface(void) { return &ext_idle_notifier_v1_interface; }
static inline const struct wl_interface *ocn_kde_fake_input_interface(void) { return &org_kde_kwin_fake_input_interface; }
static inline const struct wl_interface *ocn_data_control_manager_interface(void) { return &zwlr_data_control_manager_v1_interface; }
