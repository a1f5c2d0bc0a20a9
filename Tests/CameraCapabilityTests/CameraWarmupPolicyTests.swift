@testable import CameraCapability
@testable import Config
@testable import TestSupport
import Testing

/// The warm-up decision as pure functions: which cameras get one, and which frame ends it.
@Suite struct CameraWarmupPolicyTests {
    @Test func onlyCamerasWithAutoAdjustmentsWarmUp() {
        #expect(Warmup.choose(.auto, .none) == .none)
        #expect(Warmup.choose(.auto, AutoAdjustments(exposure: true)) == .settling)
        #expect(Warmup.choose(.auto, AutoAdjustments(gain: true)) == .settling)
        #expect(Warmup.choose(.auto, AutoAdjustments(whiteBalance: true)) == .settling)
        #expect(Warmup.choose(.always, .none) == .settling)
        #expect(Warmup.choose(.always, AutoAdjustments(exposure: true, gain: true, whiteBalance: true)) == .settling)
        #expect(Warmup.choose(.never, AutoAdjustments(exposure: true, gain: true, whiteBalance: true)) == .none)
        #expect(Warmup.choose(.never, .none) == .none)
    }

    @Test func noWarmupAcceptsTheFirstFrame() {
        #expect(Warmup.none.accepts(framesBefore: 0, elapsed: .zero))
    }

    /// At least 3 frames and 150 ms, whichever comes later; at most 1 s (a camera slowed to a few
    /// frames per second by a dim room).
    @Test func settlingNeedsFramesAndTimeButNotMoreThanALimit() {
        let w = Warmup.settling
        #expect(!w.accepts(framesBefore: 0, elapsed: .zero))
        #expect(!w.accepts(framesBefore: 2, elapsed: .milliseconds(400)))
        #expect(!w.accepts(framesBefore: 10, elapsed: .milliseconds(100)))
        #expect(w.accepts(framesBefore: 3, elapsed: .milliseconds(150)))
        #expect(w.accepts(framesBefore: 4, elapsed: .milliseconds(156)))
        #expect(w.accepts(framesBefore: 1, elapsed: .seconds(1)))
    }

    @Test func adjustmentsSayWhatRuns() {
        #expect(AutoAdjustments.none.description == "no auto adjustments")
        #expect(AutoAdjustments(exposure: true, whiteBalance: true).description == "auto exposure, white balance")
        #expect(!AutoAdjustments.none.any && AutoAdjustments(gain: true).any)
    }

    @Test func warmupModeComesFromTheConfig() {
        var config = NodeConfig(environment: [:])
        #expect(CameraSettings(config: config, environment: [:]).warmup == .auto)
        config.capabilities["camera"] = .init(enabled: true, settings: ["warmup": "always"])
        #expect(CameraSettings(config: config, environment: [:]).warmup == .always)
        config.capabilities["camera"] = .init(enabled: true, settings: ["warmup": "never"])
        #expect(CameraSettings(config: config, environment: [:]).warmup == .never)
    }
}
