@testable import Config
@testable import ScreenCapability
@testable import TestSupport

/// Shorthands for tests that build the bundle directly, from the installed manifest.
extension ScreenCapability {
    init(settings: ScreenSettings) { self.init(manifest: TestManifests.named("screen"), settings: settings) }
}

extension ScreenSettings {
    init(config: NodeConfig, environment: [String: String]) { self.init(config.capability("screen"), environment: environment) }
}
