// swift-tools-version:6.0
// libopenclaw-video.so: H.264/AAC/MP4 with FFmpeg. Nothing links it; Media's VideoEncoding loads it
// on the first camera.clip or screen.record. It does not link FFmpeg either: it opens libavcodec,
// libavformat and libavutil with dlopen for each recording and closes them after an idle period
// (FFmpegLibraries), so FFmpeg's ~130 codec libraries stay out of a node that is not recording.
// A package of its own so it links Media and the core as shared libraries.
import PackageDescription

let package = Package(
    name: "Video",
    products: [
        .library(name: "openclaw-video", type: .dynamic, targets: ["Video"]),
    ],
    dependencies: [.package(path: "../Kit"), .package(path: "../Media")],
    targets: [
        .target(name: "Video",
                dependencies: [.product(name: "openclaw-node-kit", package: "Kit"),
                               .product(name: "CBundleABI", package: "Kit"),
                               .product(name: "openclaw-media", package: "Media"),
                               .product(name: "CFFmpeg", package: "Media")],
                path: ".",
                exclude: ["Package.swift"]),
    ]
)
