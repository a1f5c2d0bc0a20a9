// swift-tools-version:6.0
// openclaw-node: a native Linux OpenClaw node. No outside Swift packages; C libraries come from
// Debian packages through the systemLibrary shims under Sources/C*.
import PackageDescription

let package = Package(
    name: "openclaw-node",
    products: [
        .executable(name: "openclaw-node", targets: ["openclaw-node"]),
        .library(name: "NodeHost", targets: ["NodeHost"]),
    ],
    targets: [
        // C shims: each is a module.modulemap + one header of static inline wrappers.
        .systemLibrary(name: "CSQLite", path: "Sources/CSQLite", pkgConfig: "sqlite3",
                       providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "COpenSSL", path: "Sources/COpenSSL", pkgConfig: "openssl",
                       providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CX11", path: "Sources/CX11", pkgConfig: "x11 xscrnsaver",
                       providers: [.apt(["libx11-dev", "libxss-dev"])]),
        .systemLibrary(name: "CSystemd", path: "Sources/CSystemd", pkgConfig: "libsystemd",
                       providers: [.apt(["libsystemd-dev"])]),
        // Media and screen capture shims (issue #6); the camera capability reuses the media ones.
        .systemLibrary(name: "CTurboJPEG", path: "Sources/CTurboJPEG", pkgConfig: "libturbojpeg",
                       providers: [.apt(["libturbojpeg0-dev"])]),
        .systemLibrary(name: "CPNG", path: "Sources/CPNG", pkgConfig: "libpng16",
                       providers: [.apt(["libpng-dev"])]),
        .systemLibrary(name: "CFFmpeg", path: "Sources/CFFmpeg",
                       pkgConfig: "libavcodec libavformat libswscale libavutil",
                       providers: [.apt(["libavcodec-dev", "libavformat-dev", "libswscale-dev", "libavutil-dev"])]),
        .systemLibrary(name: "CX11Capture", path: "Sources/CX11Capture", pkgConfig: "x11 xext xrandr xfixes",
                       providers: [.apt(["libx11-dev", "libxext-dev", "libxrandr-dev", "libxfixes-dev"])]),
        .systemLibrary(name: "CLinuxFB", path: "Sources/CLinuxFB"),
        // V4L2 camera UAPI (linux/videodev2.h from linux-libc-dev; no library to link).
        .systemLibrary(name: "CV4L2", path: "Sources/CV4L2"),
        // ALSA capture for the microphone track of screen.record and camera.clip.
        .systemLibrary(name: "CALSA", path: "Sources/CALSA", pkgConfig: "alsa",
                       providers: [.apt(["libasound2-dev"])]),
        // Gateway discovery (issue #7): the Avahi client for LAN mDNS, glibc's resolver for wide-area DNS-SD.
        .systemLibrary(name: "CAvahi", path: "Sources/CAvahi", pkgConfig: "avahi-client",
                       providers: [.apt(["libavahi-client-dev"])]),
        .systemLibrary(name: "CResolv", path: "Sources/CResolv"),

        // The runtime: config, registry/dispatcher, presence, state, device capability, control socket,
        // gateway connection and discovery.
        .target(name: "NodeHost", dependencies: ["CSQLite", "COpenSSL", "CX11", "CSystemd", "CAvahi", "CResolv"],
                path: "Sources/NodeHost"),

        // Shared media codecs (JPEG/PNG encode and decode, scaling, H.264/MP4 recording) for the
        // screen and camera capabilities.
        .target(name: "Media", dependencies: ["CTurboJPEG", "CPNG", "CFFmpeg", "CALSA"], path: "Sources/Media"),

        // Capability bundles. Canvas holds only its command specs until its issue lands and reports
        // itself unavailable, so nothing is advertised that does not work.
        .target(name: "CameraCapability", dependencies: ["NodeHost", "Media", "CV4L2"], path: "Sources/Capabilities/Camera"),
        .target(name: "LocationCapability", dependencies: ["NodeHost"], path: "Sources/Capabilities/Location"),
        .target(name: "ScreenCapability", dependencies: ["NodeHost", "Media", "CX11Capture", "CLinuxFB"],
                path: "Sources/Capabilities/Screen"),
        .target(name: "CanvasCapability", dependencies: ["NodeHost", "Media", "CX11"], path: "Sources/Capabilities/Canvas"),

        .executableTarget(name: "openclaw-node",
                          dependencies: ["NodeHost", "CameraCapability", "LocationCapability",
                                         "ScreenCapability", "CanvasCapability"],
                          path: "Sources/openclaw-node"),

        .testTarget(name: "NodeHostTests",
                    dependencies: ["NodeHost", "CameraCapability", "LocationCapability",
                                   "ScreenCapability", "CanvasCapability", "openclaw-node",
                                   "Media", "CX11Capture"],
                    path: "Tests/NodeHostTests"),
    ]
)
