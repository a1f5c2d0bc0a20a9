// swift-tools-version:6.0
// The openclaw-node runtime as one shared library (libopenclaw-node-core.so), linked by the
// executable only. It builds on the kit (../Kit: Support, Config, Kit — what bundles see) and is made of
// modules whose dependencies point one way (each row below names all it may import; the walls test
// holds every import of the sources to it):
//   Store          SQLite state and the device identity, OpenSSL; knows no protocol frame
//   HostPresence   logind / manual / x11 presence, PresenceMonitor
//   Registry       the command table and the dispatcher; knows no gateway and no capability
//   Transport      WebSocket over TCP or TLS (pinned or CA-verified), HTTP upgrade
//   DeviceInfo     the built-in device capability (device.info/status/health) and host statistics
//   Skills         the skill catalog on disk: sources, front matter, fingerprints, change signal
//   Plugins        out-of-process plugins: manifests, children kept alive, their commands
//   GatewaySession one gateway session: handshake, device auth, pairing, invoke frames, reconnects
//   Discovery      finding gateways: Avahi mDNS, wide-area DNS-SD, the selection and pin rules
//   ControlSocket  the local control socket (`invoke`, `presence`, `status`) and its client
//   Metrics        the Prometheus endpoint and textfile: what the other parts count, as exposition text
//   NodeDaemon     the daemon and doctor assembled in one place: config reload, signals, service
//   NodeCLI        parses arguments and prints
//
// Every shared part is a package of its own because SwiftPM links a library target of the same
// package statically into each product that uses it: a bundle would get a private copy of the kit
// (its own globals and Swift type metadata) instead of sharing the one the executable loaded.
// Across these modules, what one lends another is `package`, not `public`: nothing outside this
// package (a bundle, the kit) can reach it.
import PackageDescription

let kit = Target.Dependency.product(name: "openclaw-node-kit", package: "Kit")

let package = Package(
    name: "NodeHost",
    products: [
        .library(name: "openclaw-node-core", type: .dynamic,
                 targets: ["Store", "HostPresence", "Registry", "Transport", "DeviceInfo", "Skills", "Plugins",
                           "GatewaySession", "Discovery", "ControlSocket", "Metrics", "NodeDaemon", "NodeCLI"]),
    ],
    dependencies: [.package(path: "../Kit")],
    targets: [
        // C shims: each is a module.modulemap + one header of static inline wrappers.
        .systemLibrary(name: "CSQLite", path: "Shims/CSQLite", pkgConfig: "sqlite3",
                       providers: [.apt(["libsqlite3-dev"])]),
        // Headers only: libssl and libcrypto are dlopen'ed on first use (Store/OpenSSLLibrary.swift).
        .systemLibrary(name: "COpenSSL", path: "Shims/COpenSSL", providers: [.apt(["libssl-dev"])]),
        // Headers only: libsystemd is dlopen'ed on first use (Presence/SystemdLibrary.swift).
        .systemLibrary(name: "CSystemd", path: "Shims/CSystemd", providers: [.apt(["libsystemd-dev"])]),
        // Gateway discovery: the Avahi client for LAN mDNS, glibc's resolver for wide-area DNS-SD.
        // No pkgConfig: avahi-client.pc only adds -D_REENTRANT, which SwiftPM refuses with a
        // warning; the headers are on the default path and the modulemap names the libraries.
        .systemLibrary(name: "CAvahi", path: "Shims/CAvahi", providers: [.apt(["libavahi-client-dev"])]),
        .systemLibrary(name: "CResolv", path: "Shims/CResolv"),
        .systemLibrary(name: "CMalloc", path: "Shims/CMalloc"),
        // SIGTERM/SIGINT/SIGHUP as bytes on a pipe, read by a thread of the daemon (no Dispatch).
        .systemLibrary(name: "CSignals", path: "Shims/CSignals"),

        .target(name: "Store", dependencies: [kit, "CSQLite", "COpenSSL"], path: "Store"),
        .target(name: "HostPresence", dependencies: [kit, "CSystemd"], path: "Presence"),
        .target(name: "Registry", dependencies: [kit, "HostPresence"], path: "Registry"),
        .target(name: "Transport", dependencies: [kit, "Store", "COpenSSL"], path: "Transport"),
        .target(name: "DeviceInfo", dependencies: [kit, "Registry"], path: "DeviceInfo"),
        .target(name: "Skills", dependencies: [kit], path: "Skills"),
        .target(name: "Plugins", dependencies: [kit, "Registry"], path: "Plugins"),
        .target(name: "GatewaySession",
                dependencies: [kit, "Store", "HostPresence", "Registry", "Transport", "DeviceInfo", "Skills"], path: "GatewaySession"),
        .target(name: "Discovery", dependencies: [kit, "Store", "Transport", "GatewaySession", "CAvahi", "CResolv"], path: "Discovery"),
        .target(name: "ControlSocket", dependencies: [kit, "HostPresence", "Registry", "GatewaySession"], path: "ControlSocket"),
        .target(name: "Metrics", dependencies: [kit, "HostPresence", "Registry", "GatewaySession"], path: "Metrics"),
        .target(name: "NodeDaemon",
                dependencies: [kit, "Store", "HostPresence", "Registry", "Transport", "DeviceInfo", "Skills", "Plugins",
                               "GatewaySession", "Discovery", "ControlSocket", "Metrics", "CMalloc", "CSignals", "CSystemd"],
                path: "NodeDaemon"),
        .target(name: "NodeCLI",
                dependencies: [kit, "Store", "HostPresence", "Registry", "Transport", "DeviceInfo", "Skills", "Plugins", "GatewaySession",
                               "Discovery", "ControlSocket", "Metrics", "NodeDaemon"],
                path: "CLI"),
    ]
)
