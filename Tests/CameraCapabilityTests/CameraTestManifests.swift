@testable import CameraCapability
@testable import Config
@testable import TestSupport

/// Shorthands for tests that build the bundle directly, from the installed manifest.
extension CameraCapability {
    init(config: NodeConfig) { self.init(context: TestManifests.context("camera", config)) }
}

extension CameraSettings {
    init(config: NodeConfig, environment: [String: String]) { self.init(config.capability("camera"), environment: environment) }
}
