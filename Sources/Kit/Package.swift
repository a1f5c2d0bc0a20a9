// swift-tools-version:6.0
// What a capability bundle sees of openclaw-node, as one shared library (libopenclaw-node-kit.so):
//   Support  POSIX and JSON helpers (Subprocess, DeadlineTimer, Logger, JSONValue, DNSName)
//   Config   the JSON5 config and its typed form (knows nothing of ours but Support)
//   Kit      Capability, CommandSpec with its handler, NodeError codes, the presence-source
//            protocol, and the bundle contract (BundleExports, BundleLoader, CBundleABI)
//   ControlLink  the client of a running daemon's control socket (the runtime's CLI commands;
//            not for bundles: the walls test keeps them out)
// The runtime (Sources/NodeHost: registry, gateway, transport, store, discovery, CLI) builds on it
// in a package of its own, so bundles cannot import the gateway, the transport or the store: the
// compiler keeps that rule, and both sides share one copy of these modules.
import PackageDescription

let package = Package(
    name: "Kit",
    products: [
        .library(name: "openclaw-node-kit", type: .dynamic, targets: ["Support", "Config", "Kit", "ControlLink"]),
        // The same modules linked into one program: the launcher (Sources/openclaw-node-launcher),
        // which answers `invoke` through a running daemon without loading the Swift runtime's
        // shared libraries, the core or this kit.
        .library(name: "openclaw-node-client", type: .static, targets: ["Support", "Config", "Kit", "ControlLink"]),
        // The bundle contract (a C header), for the bundles' entry points.
        .library(name: "CBundleABI", targets: ["CBundleABI"]),
    ],
    targets: [
        .systemLibrary(name: "CBundleABI", path: "Shims/CBundleABI"),
        // prctl(2) wrappers (a variadic function) for the process-tree reaper.
        .systemLibrary(name: "CProcessControl", path: "Shims/CProcessControl"),
        // malloc_trim, for giving memory back after a large library or model is released.
        .systemLibrary(name: "CHeap", path: "Shims/CHeap"),
        .target(name: "Support", dependencies: ["CProcessControl", "CHeap"], path: "Support"),
        .target(name: "Config", dependencies: ["Support"], path: "Config"),
        .target(name: "Kit", dependencies: ["Support", "Config", "CBundleABI"], path: "Kit"),
        .target(name: "ControlLink", dependencies: ["Support", "Config", "Kit"], path: "ControlLink"),
    ]
)
