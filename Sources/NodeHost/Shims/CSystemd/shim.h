#include <systemd/sd-bus.h>
#include <systemd/sd-daemon.h>
#include <systemd/sd-login.h>
#include <stdlib.h>

// sd_bus_get_property_trivial is variadic; wrap the boolean case the presence source needs.
static inline int csystemd_get_bool_property(sd_bus *bus, const char *destination, const char *path,
                                             const char *interface, const char *member, int *value) {
    sd_bus_error error = SD_BUS_ERROR_NULL;
    int r = sd_bus_get_property_trivial(bus, destination, path, interface, member, &error, 'b', value);
    sd_bus_error_free(&error);
    return r;
}

// sd_bus_message_read is variadic; the sleep monitor only needs one boolean argument.
static inline int csystemd_read_bool(sd_bus_message *m, int *value) {
    return sd_bus_message_read(m, "b", value);
}
