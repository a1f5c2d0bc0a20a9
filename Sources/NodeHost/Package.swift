// swift-tools-version:6.0
// The openclaw-node runtime as one shared library (libopenclaw-node-core.so), linked by the
// executable only. It builds on the kit (../Kit: Support, Config, Kit — what bundles see) and is made of
// modules whose dependencies point one way, so the compiler keeps the rules:
//   Store        SQLite state and the device identity; knows no protocol frame
//   HostPresence logind / manual / x11 (through libopenclaw-x11.so) presence, PresenceMonitor
//   Registry     the command table and the dispatcher; knows no gateway and no capability
//   Runtime      transport, gateway, discovery, plugins, the device capability, control socket,
//                system events, and the daemon and doctor assembled in one place
//   NodeCLI      parses arguments and prints
//
// Every shared part is a package of its own because SwiftPM links a library target of the same
// package statically into each product that uses it: a bundle would get a private copy of the kit
// (its own globals and Swift type metadata) instead of sharing the one the executable loaded.
import PackageDescription

let kit = Target.Dependency.product(name: "openclaw-node-kit", package: "Kit")

let package = Package(
    name: "NodeHost",
    products: [
        .library(name: "openclaw-node-core", type: .dynamic,
                 targets: ["Store", "HostPresence", "Registry", "Runtime", "NodeCLI"]),
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
        .target(name: "Runtime",
                dependencies: [kit, "Store", "HostPresence", "Registry", "COpenSSL", "CAvahi", "CResolv", "CMalloc", "CSignals"],
                path: "Runtime"),
        .target(name: "NodeCLI", dependencies: [kit, "Store", "HostPresence", "Registry", "Runtime"], path: "CLI"),
    ]
)
