// The contract between openclaw-node and its capability bundles (shared libraries loaded at run
// time). It is C so the host can read a bundle's stamp before it trusts any Swift type in it.
//
// Everything here is compiled into the code that includes it: a bundle carries the version and ABI
// number of the core it was built against, and the host compares them with its own before it calls
// anything else in the bundle. Bump OPENCLAW_NODE_BUNDLE_ABI whenever what a bundle sees of the core
// (Capability, CommandSpec, BundleExports, NodeConfig, …) changes shape.
#ifndef OPENCLAW_NODE_BUNDLE_ABI_H
#define OPENCLAW_NODE_BUNDLE_ABI_H
#include <stdint.h>
#include <string.h>

#define OPENCLAW_NODE_VERSION "0.2.0"
#define OPENCLAW_NODE_BUILD "2"
#define OPENCLAW_NODE_BUNDLE_ABI 3u

// The one symbol a bundle exports, named after what it provides (so bundles linked together, as in
// the test binary, do not clash): void openclaw_node_bundle_<name>(openclaw_node_bundle_info *out).
#define OPENCLAW_NODE_BUNDLE_SYMBOL_PREFIX "openclaw_node_bundle_"

typedef struct openclaw_node_bundle_info {
    uint32_t abi;          // OPENCLAW_NODE_BUNDLE_ABI when the bundle was built
    char version[32];      // OPENCLAW_NODE_VERSION when the bundle was built
    char name[48];         // the capability it provides ("camera"); must match the file name
    // Returns a retained BundleExports (Swift). Called only after abi, version and name matched.
    void *(*make)(void);
} openclaw_node_bundle_info;

typedef void (*openclaw_node_bundle_entry)(openclaw_node_bundle_info *out);

// Called by the bundle's entry point: stamps the info with this header's version and ABI.
static inline void openclaw_node_bundle_describe(openclaw_node_bundle_info *out, const char *name,
                                                 void *(*make)(void)) {
    memset(out, 0, sizeof *out);
    out->abi = OPENCLAW_NODE_BUNDLE_ABI;
    strncpy(out->version, OPENCLAW_NODE_VERSION, sizeof out->version - 1);
    strncpy(out->name, name, sizeof out->name - 1);
    out->make = make;
}

static inline openclaw_node_bundle_entry openclaw_node_bundle_entry_cast(void *symbol) {
    return (openclaw_node_bundle_entry)symbol;
}
#endif
