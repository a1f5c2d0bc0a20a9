// swift-tools-version:6.0
// What the test targets share: processes stopped by PID, the test gateway and other loopback
// servers, Xvfb/sway, the daemon under test, image checks. A package of its own so that only the
// test targets build it (a root-package target would be built by every `swift build`, release too,
// where the `@testable import`s it needs are not allowed) and so that each test target can use it
// without depending on the others.
import PackageDescription

let package = Package(
    name: "TestSupport",
    products: [.library(name: "openclaw-test-support", targets: ["TestSupport"])],
    dependencies: [.package(path: "../../Sources/Kit"), .package(path: "../../Sources/NodeHost"),
                   .package(path: "../../Sources/Media")],
    targets: [
        .target(name: "TestSupport",
                dependencies: [.product(name: "openclaw-node-kit", package: "Kit"),
                               .product(name: "openclaw-node-core", package: "NodeHost"),
                               .product(name: "openclaw-media", package: "Media"),
                               .product(name: "CX11", package: "Media")],
                path: "Sources"),
    ]
)
