#include <systemd/sd-bus.h>
#include <systemd/sd-login.h>
#include <stdlib.h>
#include <stdio.h>
#include <fcntl.h>
#include <errno.h>

// libsystemd is opened with dlopen on first use (SystemdLibrary), not linked: one-shot commands
// never map it and its dependencies. Its headers give the types; the two variadic calls go through
// function pointers the caller looked up.
typedef int (*csystemd_get_property_trivial_fn)(sd_bus *bus, const char *destination, const char *path,
                                                const char *interface, const char *member, sd_bus_error *ret_error,
                                                char type, ...);
typedef int (*csystemd_message_read_fn)(sd_bus_message *m, const char *types, ...);
typedef void (*csystemd_error_free_fn)(sd_bus_error *e);

// sd_bus_get_property_trivial for the boolean case the presence source needs.
static inline int csystemd_get_bool_property(void *get_trivial, void *error_free, sd_bus *bus, const char *destination,
                                             const char *path, const char *interface, const char *member, int *value) {
    sd_bus_error error = SD_BUS_ERROR_NULL;
    int r = ((csystemd_get_property_trivial_fn)get_trivial)(bus, destination, path, interface, member, &error, 'b', value);
    ((csystemd_error_free_fn)error_free)(&error);
    return r;
}

// sd_bus_message_read of one boolean argument (the sleep monitor's signal).
static inline int csystemd_read_bool(void *message_read, sd_bus_message *m, int *value) {
    return ((csystemd_message_read_fn)message_read)(m, "b", value);
}

typedef int (*csystemd_call_method_fn)(sd_bus *bus, const char *destination, const char *path, const char *interface,
                                       const char *member, sd_bus_error *ret_error, sd_bus_message **reply,
                                       const char *types, ...);
typedef sd_bus_message *(*csystemd_message_unref_fn)(sd_bus_message *m);

// logind's Manager.Inhibit(what, who, why, mode): the lock's descriptor, as a copy of our own
// (close-on-exec; the reply owns the one it carries) in *fd. On failure a negative errno and the
// D-Bus error's name and message in `message` (of `size` bytes).
static inline int csystemd_inhibit(void *call_method, void *message_read, void *message_unref, void *error_free,
                                   sd_bus *bus, const char *what, const char *who, const char *why, const char *mode,
                                   int *fd, char *message, size_t size) {
    sd_bus_error error = SD_BUS_ERROR_NULL;
    sd_bus_message *reply = NULL;
    int r = ((csystemd_call_method_fn)call_method)(bus, "org.freedesktop.login1", "/org/freedesktop/login1",
                                                   "org.freedesktop.login1.Manager", "Inhibit", &error, &reply,
                                                   "ssss", what, who, why, mode);
    if (r < 0) {
        if (size > 0) snprintf(message, size, "%s: %s", error.name ? error.name : "error", error.message ? error.message : "");
    } else {
        int held = -1;
        r = ((csystemd_message_read_fn)message_read)(reply, "h", &held);
        if (r >= 0) {
            *fd = fcntl(held, F_DUPFD_CLOEXEC, 3);
            if (*fd < 0) r = -errno;
        } else if (size > 0) {
            snprintf(message, size, "the reply to Inhibit holds no descriptor");
        }
        ((csystemd_message_unref_fn)message_unref)(reply);
    }
    ((csystemd_error_free_fn)error_free)(&error);
    return r;
}

// The desktop portal's Inhibit(window, flags, options) on the session bus, with options
// {"reason": why}: the request's object path (closing it ends the inhibition) in `handle`. On
// failure a negative errno and the D-Bus error in `message`.
static inline int csystemd_portal_inhibit(void *call_method, void *message_read, void *message_unref, void *error_free,
                                          sd_bus *bus, unsigned flags, const char *why,
                                          char *handle, size_t handle_size, char *message, size_t size) {
    sd_bus_error error = SD_BUS_ERROR_NULL;
    sd_bus_message *reply = NULL;
    int r = ((csystemd_call_method_fn)call_method)(bus, "org.freedesktop.portal.Desktop", "/org/freedesktop/portal/desktop",
                                                   "org.freedesktop.portal.Inhibit", "Inhibit", &error, &reply,
                                                   "sua{sv}", "", flags, 1, "reason", "s", why);
    if (r < 0) {
        if (size > 0) snprintf(message, size, "%s: %s", error.name ? error.name : "error", error.message ? error.message : "");
    } else {
        const char *path = NULL;
        r = ((csystemd_message_read_fn)message_read)(reply, "o", &path);
        if (r >= 0 && path) snprintf(handle, handle_size, "%s", path);
        else if (size > 0) snprintf(message, size, "the reply to Inhibit holds no request path");
        ((csystemd_message_unref_fn)message_unref)(reply);
    }
    ((csystemd_error_free_fn)error_free)(&error);
    return r;
}

// org.freedesktop.portal.Request.Close() on `path`: ends what the request holds.
static inline int csystemd_close_request(void *call_method, void *error_free, sd_bus *bus, const char *path) {
    sd_bus_error error = SD_BUS_ERROR_NULL;
    int r = ((csystemd_call_method_fn)call_method)(bus, "org.freedesktop.portal.Desktop", path,
                                                   "org.freedesktop.portal.Request", "Close", &error, NULL, "");
    ((csystemd_error_free_fn)error_free)(&error);
    return r;
}
