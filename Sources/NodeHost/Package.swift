// swift-tools-version:6.0
// The openclaw-node core, as shared libraries: the executable and every capability bundle link the
// same copy (one set of globals and Swift type metadata in the process). It is a package of its own
// because SwiftPM links a library target of the same package statically into each product, which
// would give every dlopen'ed bundle a private copy of the core.
import PackageDescription

let package = Package(
    name: "NodeHost",
    products: [
        // The runtime: config, registry/dispatcher, presence, state, gateway, discovery, plugins, CLI.
        .library(name: "openclaw-node-core", type: .dynamic, targets: ["NodeHost"]),
        // JPEG/PNG, scaling, H.264/AAC/MP4, microphone: shared by the camera and screen bundles.
        .library(name: "openclaw-media", type: .dynamic, targets: ["Media"]),
        // Xlib helpers shared by the screen and canvas bundles and loaded for presence.mode x11:
        // one process-wide X error handler, so one copy.
        .library(name: "openclaw-x11", type: .dynamic, targets: ["X11Support"]),
    ],
    targets: [
        // C shims: each is a module.modulemap + one header of static inline wrappers.
        .systemLibrary(name: "CBundleABI", path: "Shims/CBundleABI"),
        .systemLibrary(name: "CSQLite", path: "Shims/CSQLite", pkgConfig: "sqlite3",
                       providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "COpenSSL", path: "Shims/COpenSSL", pkgConfig: "openssl",
                       providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CSystemd", path: "Shims/CSystemd", pkgConfig: "libsystemd",
                       providers: [.apt(["libsystemd-dev"])]),
        // Gateway discovery: the Avahi client for LAN mDNS, glibc's resolver for wide-area DNS-SD.
        .systemLibrary(name: "CAvahi", path: "Shims/CAvahi", pkgConfig: "avahi-client",
                       providers: [.apt(["libavahi-client-dev"])]),
        .systemLibrary(name: "CResolv", path: "Shims/CResolv"),
        .systemLibrary(name: "CX11", path: "Shims/CX11", pkgConfig: "x11 xscrnsaver",
                       providers: [.apt(["libx11-dev", "libxss-dev"])]),
        .systemLibrary(name: "CTurboJPEG", path: "Shims/CTurboJPEG", pkgConfig: "libturbojpeg",
                       providers: [.apt(["libturbojpeg0-dev"])]),
        .systemLibrary(name: "CPNG", path: "Shims/CPNG", pkgConfig: "libpng16",
                       providers: [.apt(["libpng-dev"])]),
        .systemLibrary(name: "CFFmpeg", path: "Shims/CFFmpeg",
                       pkgConfig: "libavcodec libavformat libswscale libavutil",
                       providers: [.apt(["libavcodec-dev", "libavformat-dev", "libswscale-dev", "libavutil-dev"])]),
        .systemLibrary(name: "CALSA", path: "Shims/CALSA", pkgConfig: "alsa",
                       providers: [.apt(["libasound2-dev"])]),

        .target(name: "NodeHost",
                dependencies: ["CBundleABI", "CSQLite", "COpenSSL", "CSystemd", "CAvahi", "CResolv"],
                path: ".",
                sources: ["Bundles", "CLI", "Config", "Control", "Device", "Discovery", "Gateway", "Identity", "Plugins",
                          "Presence", "Registry", "Runtime", "Store", "Support", "System", "Transport"]),
        .target(name: "Media", dependencies: ["CTurboJPEG", "CPNG", "CFFmpeg", "CALSA"], path: "Media"),
        .target(name: "X11Support", dependencies: ["NodeHost", "CBundleABI", "CX11"], path: "X11Support"),
    ]
)
