// swift-tools-version:6.0
// Libraries the capability bundles share, built on the core: each a shared library so that one copy
// is loaded however many bundles use it (one X error handler per process, one set of Media types).
import PackageDescription

let package = Package(
    name: "Media",
    products: [
        // JPEG/PNG, scaling (libswscale), the ALSA microphone (libasound opened on first use), and the
        // door to the video library.
        .library(name: "openclaw-media", type: .dynamic, targets: ["Media"]),
        // Xlib helpers for the screen and canvas bundles; the core dlopens it for presence.mode x11.
        .library(name: "openclaw-x11", type: .dynamic, targets: ["X11Support"]),
        // FFmpeg's headers, for the video library (Sources/Video).
        // Wayland client helpers (outputs, event loop, idle presence) for the screen and computer
        // bundles; the core dlopens it for presence.mode wayland.
        .library(name: "openclaw-wayland", type: .dynamic, targets: ["WaylandSupport"]),
        // The desktop session's D-Bus (sd-bus) and PipeWire screen casts, shared by the GNOME and KDE
        // backends of the screen, computer and desktop bundles.
        // The core dlopens it for presence.mode gnome.
        .library(name: "openclaw-session", type: .dynamic, targets: ["DesktopSession"]),
        .library(name: "CWaylandProtocols", targets: ["CWaylandProtocols"]),
        .library(name: "CFFmpeg", targets: ["CFFmpeg"]),
        .library(name: "CX11", targets: ["CX11"]),
    ],
    dependencies: [.package(path: "../Kit")],
    targets: [
        // Decoding (TurboJPEG) and encoding (libjpeg's API: restart markers, for strips on several cores).
        .systemLibrary(name: "CTurboJPEG", path: "Shims/CTurboJPEG", pkgConfig: "libturbojpeg",
                       providers: [.apt(["libturbojpeg0-dev"])]),
        .systemLibrary(name: "CJPEG", path: "Shims/CJPEG", pkgConfig: "libjpeg",
                       providers: [.apt(["libjpeg62-turbo-dev"])]),
        .systemLibrary(name: "CPNG", path: "Shims/CPNG", pkgConfig: "libpng16",
                       providers: [.apt(["libpng-dev"])]),
        // The PNG writer's deflate and CRC (libpng, which decodes PNG, links zlib already).
        .systemLibrary(name: "CZlib", path: "Shims/CZlib", pkgConfig: "zlib",
                       providers: [.apt(["zlib1g-dev"])]),
        // Headers only (Debian installs them on the default include path): Media opens libswscale
        // with dlopen on first use (SwscaleLibrary), the video library links libavcodec, libavformat
        // and libavutil in its own manifest, so an idle node maps none of FFmpeg.
        .systemLibrary(name: "CFFmpeg", path: "Shims/CFFmpeg",
                       providers: [.apt(["libavcodec-dev", "libavformat-dev", "libswscale-dev", "libavutil-dev"])]),
        // Headers only: libasound is dlopen'ed when a microphone is first opened (ALSALibrary).
        .systemLibrary(name: "CALSA", path: "Shims/CALSA", providers: [.apt(["libasound2-dev"])]),
        .systemLibrary(name: "CX11", path: "Shims/CX11", pkgConfig: "x11 xscrnsaver xrandr",
                       providers: [.apt(["libx11-dev", "libxss-dev", "libxrandr-dev"])]),

        // libwayland-client, and the protocol glue wayland-scanner generated from the XML in
        // Shims/CWaylandProtocols/protocols (scripts/wayland-protocols; committed, checked by a test).
        .systemLibrary(name: "CWaylandClient", path: "Shims/CWaylandClient", pkgConfig: "wayland-client",
                       providers: [.apt(["libwayland-dev"])]),
        .target(name: "CWaylandProtocols", dependencies: ["CWaylandClient"], path: "Shims/CWaylandProtocols",
                exclude: ["protocols"], publicHeadersPath: "include"),
        // libpipewire-0.3 (screen-cast frames) and sd-bus from libsystemd (the session bus). PipeWire
        // is a C target, not a systemLibrary, for its header path (Shims/CPipeWire/cpipewire.c says why).
        .target(name: "CPipeWire", path: "Shims/CPipeWire", publicHeadersPath: "include"),
        .systemLibrary(name: "CSdBus", path: "Shims/CSdBus", pkgConfig: "libsystemd",
                       providers: [.apt(["libsystemd-dev"])]),
        .target(name: "DesktopSession",
                // Not Media: a dynamic library linking the Media target would carry a second copy of it.
                dependencies: [.product(name: "openclaw-node-kit", package: "Kit"),
                               .product(name: "CBundleABI", package: "Kit"), "CPipeWire", "CSdBus"],
                path: "DesktopSession"),
        .target(name: "Media",
                dependencies: [.product(name: "openclaw-node-kit", package: "Kit"),
                               "CTurboJPEG", "CJPEG", "CPNG", "CZlib", "CFFmpeg", "CALSA"],
                path: ".",
                exclude: ["Package.swift", "Shims", "X11", "Wayland", "DesktopSession"]),
        .target(name: "X11Support",
                dependencies: [.product(name: "openclaw-node-kit", package: "Kit"),
                               .product(name: "CBundleABI", package: "Kit"), "CX11"],
                path: "X11"),
        .target(name: "WaylandSupport",
                dependencies: [.product(name: "openclaw-node-kit", package: "Kit"),
                               .product(name: "CBundleABI", package: "Kit"), "CWaylandClient", "CWaylandProtocols"],
                path: "Wayland"),
    ]
)
