@testable import Config
@testable import LocationCapability
@testable import TestSupport

/// Shorthands for tests that build the bundle directly, from the installed manifest.
extension LocationCapability {
    convenience init(settings: LocationSettings, timing: GpsdWatcher.Timing) {
        self.init(manifest: TestManifests.named("location"), settings: settings, timing: timing)
    }
}

extension LocationCommands {
    static func capability(config: NodeConfig) -> LocationCapability { capability(context: TestManifests.context("location", config)) }
}
