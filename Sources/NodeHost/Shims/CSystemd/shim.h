#include <systemd/sd-bus.h>
#include <systemd/sd-login.h>
#include <stdlib.h>

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
