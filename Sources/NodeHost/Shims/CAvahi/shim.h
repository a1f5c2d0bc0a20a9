// Avahi client API for LAN gateway discovery (browse + resolve over D-Bus to avahi-daemon). The
// library is opened with dlopen when discovery runs (AvahiLibrary): these headers give the types.
#include <avahi-client/client.h>
#include <avahi-client/lookup.h>
#include <avahi-common/simple-watch.h>
#include <avahi-common/error.h>
#include <avahi-common/strlst.h>
#include <avahi-common/address.h>
#include <avahi-common/malloc.h>

// The UNSPEC values are members of anonymous enums that Swift imports with the wrong integer type.
static inline AvahiIfIndex cavahi_if_unspec(void) { return AVAHI_IF_UNSPEC; }
static inline AvahiProtocol cavahi_proto_unspec(void) { return AVAHI_PROTO_UNSPEC; }
static inline int cavahi_err_disconnected(void) { return AVAHI_ERR_DISCONNECTED; }
static inline AvahiProtocol cavahi_proto_inet(void) { return AVAHI_PROTO_INET; }
static inline AvahiProtocol cavahi_proto_inet6(void) { return AVAHI_PROTO_INET6; }

static inline size_t cavahi_address_text_max(void) { return AVAHI_ADDRESS_STR_MAX; }
