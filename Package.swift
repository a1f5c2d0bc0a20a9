// swift-tools-version:6.0
// openclaw-node: a native Linux OpenClaw node. No outside Swift packages; C libraries come from
// Debian packages through the systemLibrary shims (Sources/C*, Sources/Kit/Shims, Sources/NodeHost/Shims, Sources/Media/Shims).
//
// The executable links only the core (Sources/NodeHost, a package of its own so that one copy of it
// is shared). Each capability is a bundle, a shared library `libopenclaw-<name>.so` that the core
// loads at run time when the capability is enabled (docs/ARCHITECTURE.md).
import PackageDescription

// What bundles see (Support, Config, Kit) and the runtime (executable and tests only).
let kit = Target.Dependency.product(name: "openclaw-node-kit", package: "Kit")
let core = Target.Dependency.product(name: "openclaw-node-core", package: "NodeHost")
let bundleABI = Target.Dependency.product(name: "CBundleABI", package: "Kit")
let media = Target.Dependency.product(name: "openclaw-media", package: "Media")
let x11 = Target.Dependency.product(name: "openclaw-x11", package: "Media")
let cx11 = Target.Dependency.product(name: "CX11", package: "Media")
let wayland = Target.Dependency.product(name: "openclaw-wayland", package: "Media")
let cwayland = Target.Dependency.product(name: "CWaylandProtocols", package: "Media")
let desktopSession = Target.Dependency.product(name: "openclaw-session", package: "Media")
let video = Target.Dependency.product(name: "openclaw-video", package: "Video")
let testSupport = Target.Dependency.product(name: "openclaw-test-support", package: "TestSupport")

/// The launcher links the Swift runtime statically, but in the main pass of a cross build
/// (scripts/package sets OPENCLAW_LAUNCHER_STATIC=0 there): Swift 6.0's driver takes
/// -static-stdlib's libraries from the -resource-dir it is given, which is the target's shared
/// runtime there, so the shipped launcher is built in a pass of its own against the static one.
let launcherLink = Context.environment["OPENCLAW_LAUNCHER_STATIC"] == "0" ? [] : ["-static-stdlib"]

/// The capability bundles, one row each: the folder under Sources/Capabilities (its lower-cased
/// name is the bundle's), and what it links besides the kit and the bundle contract. Each row makes
/// a target `<Folder>Capability`, a dynamic product `openclaw-<name>` (libopenclaw-<name>.so) and a
/// dependency of the tests; the bundle's manifest (libopenclaw-<name>.manifest.json5, beside its
/// sources) is what the node reads about it. Its tests are `Tests/<Folder>CapabilityTests`.
let bundles: [(folder: String, links: [Target.Dependency])] = [
    ("Camera", [media, "CV4L2"]),
    ("Canvas", [media, x11, cx11]),
    // computer.act (XTest, wlroots virtual input); monitors and displayFrameId shared with screen via X11Support.
    ("Computer", [x11, "CXTest", wayland, cwayland, desktopSession]),
    // fs.listDir, terminal.upload and file transfer inside the node's own path policy; tar and file(1) as programs.
    // desktop.stream: the desktop through x11vnc/wayvnc (programs), or on GNOME and KDE the node's
    // own RFB server (Mutter's RemoteDesktop; KWin's screenshots and fake input); and the gateway's
    // attach socket.
    ("Desktop", [desktopSession, wayland]),
    ("Files", []),
    ("Location", []),
    // The tools of MCP servers on the device (stdio children, streamable HTTP), for agents.
    ("Mcp", []),
    ("Screen", [media, x11, "CX11Capture", "CLinuxFB", wayland, cwayland, desktopSession]),
    // system.run with exec approvals: POSIX only, no libraries of its own.
    ("System", []),
    // Push-to-talk with on-device recognition (pocketsphinx), espeak-ng replies, the ALSA microphone.
    ("Talk", [media, "CPocketSphinx", "CEspeak", "CMPG123"]),
]
let bundleTargets = bundles.map { b in
    Target.target(name: "\(b.folder)Capability", dependencies: [kit, bundleABI] + b.links, path: "Sources/Capabilities/\(b.folder)",
                  exclude: ["libopenclaw-\(b.folder.lowercased()).manifest.json5"])
}

let package = Package(
    name: "openclaw-node",
    products: [
        .executable(name: "openclaw-node", targets: ["openclaw-node"]),
        .executable(name: "openclaw-node-launcher", targets: ["openclaw-node-launcher"]),
    ] + bundles.map { b in
        // Capability bundles: libopenclaw-<name>.so, found next to the executable or in ../lib/openclaw-node/.
        .library(name: "openclaw-\(b.folder.lowercased())", type: .dynamic, targets: ["\(b.folder)Capability"])
    },
    // The core, the shared libraries on it, and the video library: each its own package so that
    // it is linked as one shared copy (docs/ARCHITECTURE.md).
    dependencies: [.package(path: "Sources/Kit"), .package(path: "Sources/NodeHost"),
                   .package(path: "Sources/Media"), .package(path: "Sources/Video"),
                   .package(path: "Tests/TestSupport")],
    targets: [
        // Shims only the bundles use (the core's and Media's live in their packages' Shims folders).
        .systemLibrary(name: "CX11Capture", path: "Sources/CX11Capture", pkgConfig: "x11 xext xrandr xfixes xdamage",
                       providers: [.apt(["libx11-dev", "libxext-dev", "libxrandr-dev", "libxfixes-dev", "libxdamage-dev"])]),
        .systemLibrary(name: "CLinuxFB", path: "Sources/CLinuxFB"),
        // XTest input injection for computer.act; XInput2 to notice a person at the desk.
        .systemLibrary(name: "CXTest", path: "Sources/CXTest", pkgConfig: "x11 xtst xi",
                       providers: [.apt(["libx11-dev", "libxtst-dev", "libxi-dev"])]),
        // V4L2 camera UAPI (linux/videodev2.h from linux-libc-dev; no library to link).
        .systemLibrary(name: "CV4L2", path: "Sources/CV4L2"),
        // Spoken replies on the device (espeak-ng).
        .systemLibrary(name: "CEspeak", path: "Sources/CEspeak", providers: [.apt(["libespeak-ng-dev", "espeak-ng-data"])]),
        // Offline speech recognition for talk (pocketsphinx 0.8 and Debian's en-US model).
        .systemLibrary(name: "CPocketSphinx", path: "Sources/CPocketSphinx", pkgConfig: "pocketsphinx",
                       providers: [.apt(["libpocketsphinx-dev", "libsphinxbase-dev", "pocketsphinx-en-us"])]),
        // MP3 speech from the gateway's talk.speak: libmpg123's header only (dlopen'ed on first use).
        .systemLibrary(name: "CMPG123", path: "Sources/CMPG123", providers: [.apt(["libmpg123-dev"])]),

        // Links the core only; bundles are dlopen'ed.
        // The executable finds the core next to itself ($ORIGIN, as built) or in an installed
        // layout's lib directory (bin/openclaw-node + lib/openclaw-node/*.so).
        .executableTarget(name: "openclaw-node", dependencies: [core], path: "Sources/openclaw-node",
                          linkerSettings: [.unsafeFlags(["-Xlinker", "-rpath=$ORIGIN/../lib/openclaw-node"])]),
        // What the package installs as /usr/bin/openclaw-node: `invoke` answered by a running
        // daemon in a program with the Swift runtime linked in (no shared Swift library to load:
        // half the start of a call), everything else handed to the full program by execv.
        .executableTarget(name: "openclaw-node-launcher",
                          dependencies: [.product(name: "openclaw-node-client", package: "Kit")],
                          path: "Sources/openclaw-node-launcher", linkerSettings: [.unsafeFlags(launcherLink)]),

        // Tests are split by module, so that a module's tests build without the others: the kit's
        // own (JSON5, config, manifests, JSON writing) with the kit alone; the core's (runtime, CLI,
        // gateway, store, discovery, plugins, the trust-boundary attacks on the daemon) without any
        // bundle; each bundle's with that bundle only (one `<Folder>CapabilityTests` per row of
        // `bundles`); Media's with Media and the video library. Shared helpers: Tests/TestSupport.
        .testTarget(name: "KitTests", dependencies: [kit], path: "Tests/KitTests"),
        .testTarget(name: "NodeHostTests", dependencies: [kit, core, testSupport, x11, cx11, "openclaw-node"],
                    path: "Tests/NodeHostTests"),
        .testTarget(name: "MediaTests", dependencies: [kit, media, video, testSupport], path: "Tests/MediaTests"),
    ] + bundleTargets + bundles.map { b in
        .testTarget(name: "\(b.folder)CapabilityTests",
                    dependencies: [kit, core, testSupport, "openclaw-node", .target(name: "\(b.folder)Capability")] + b.links,
                    path: "Tests/\(b.folder)CapabilityTests")
    }
)
