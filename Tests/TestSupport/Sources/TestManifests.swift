@testable import Config
@testable import Kit
@testable import NodeDaemon
@testable import Support

/// The installed manifests (beside the test binary, as scripts/build puts them) and contexts made
/// from a config the way the runtime makes them, for tests that build a bundle's capability directly.
enum TestManifests {
    static func named(_ name: String) -> BundleManifest {
        guard let m = BundleCatalog.current.named(name) else {
            fatalError("no manifest for \(name) in \(BundleCatalog.searchDirectories): run scripts/build first")
        }
        return m
    }

    static func context(_ name: String, _ config: NodeConfig) -> CapabilityContext {
        NodeRuntime.context(named(name), config: config, presence: FixedPresenceSource(.foreground, reason: "test"))
    }
}
