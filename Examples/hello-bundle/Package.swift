// swift-tools-version:6.0
// An example capability bundle built outside the node's own package (docs/ARCHITECTURE.md "Adding a
// capability"): one library, libopenclaw-hello.so, and its manifest beside it. It links only the
// kit — what every bundle sees — and the node loads, validates, advertises, documents and serves it
// with no line of the core changed.
import PackageDescription

let package = Package(
    name: "hello-bundle",
    products: [.library(name: "openclaw-hello", type: .dynamic, targets: ["HelloBundle"])],
    dependencies: [.package(path: "../../Sources/Kit")],
    targets: [
        .target(name: "HelloBundle",
                dependencies: [.product(name: "openclaw-node-kit", package: "Kit"), .product(name: "CBundleABI", package: "Kit")],
                path: "Sources"),
    ]
)
