@testable import CameraCapability
@testable import Config
@testable import Kit
@testable import LocationCapability
@testable import Runtime
@testable import ScreenCapability
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

extension ScreenCapability {
    init(settings: ScreenSettings) { self.init(manifest: TestManifests.named("screen"), settings: settings) }
}

extension ScreenSettings {
    init(config: NodeConfig, environment: [String: String]) { self.init(config.capability("screen"), environment: environment) }
}

extension CameraCapability {
    init(config: NodeConfig) { self.init(context: TestManifests.context("camera", config)) }
}

extension CameraSettings {
    init(config: NodeConfig, environment: [String: String]) { self.init(config.capability("camera"), environment: environment) }
}

extension LocationCapability {
    convenience init(settings: LocationSettings, timing: GpsdWatcher.Timing) {
        self.init(manifest: TestManifests.named("location"), settings: settings, timing: timing)
    }
}

extension LocationCommands {
    static func capability(config: NodeConfig) -> LocationCapability { capability(context: TestManifests.context("location", config)) }
}
