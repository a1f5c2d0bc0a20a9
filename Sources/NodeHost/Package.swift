// swift-tools-version:6.0
// The openclaw-node runtime as one shared library (libopenclaw-node-core.so): registry and
// dispatcher, presence, state, transport, gateway, discovery, plugins, control socket, CLI. It builds
// on the kit (Kit/, what bundles see) and is linked by the executable only.
//
// Every shared part is a package of its own because SwiftPM links a library target of the same
// package statically into each product that uses it: a bundle would get a private copy of the kit
// (its own globals and Swift type metadata) instead of sharing the one the executable loaded.
import PackageDescription

let package = Package(
    name: "NodeHost",
    products: [
        // The runtime: config, registry/dispatcher, presence, state, gateway, discovery, plugins, CLI.
        .library(name: "openclaw-node-core", type: .dynamic, targets: ["NodeHost"]),
    ],
    dependencies: [.package(path: "Kit")],
    targets: [
        // C shims: each is a module.modulemap + one header of static inline wrappers.
        .systemLibrary(name: "CSQLite", path: "Shims/CSQLite", pkgConfig: "sqlite3",
                       providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "COpenSSL", path: "Shims/COpenSSL", pkgConfig: "openssl",
                       providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CSystemd", path: "Shims/CSystemd", pkgConfig: "libsystemd",
                       providers: [.apt(["libsystemd-dev"])]),
        // Gateway discovery: the Avahi client for LAN mDNS, glibc's resolver for wide-area DNS-SD.
        // No pkgConfig: avahi-client.pc only adds -D_REENTRANT, which SwiftPM refuses with a
        // warning; the headers are on the default path and the modulemap names the libraries.
        .systemLibrary(name: "CAvahi", path: "Shims/CAvahi", providers: [.apt(["libavahi-client-dev"])]),
        .systemLibrary(name: "CResolv", path: "Shims/CResolv"),

        .target(name: "NodeHost",
                dependencies: [.product(name: "openclaw-node-kit", package: "Kit"),
                               "CSQLite", "COpenSSL", "CSystemd", "CAvahi", "CResolv"],
                path: ".",
                exclude: ["Package.swift", "Shims", "Kit"]),
    ]
)
