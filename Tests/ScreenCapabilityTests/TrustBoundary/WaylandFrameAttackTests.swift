@testable import ScreenCapability
import Testing

/// A compositor's screencopy buffer description sizes a memfd and indexes its pixels: sizes that
/// overflow, exceed wl_shm's Int32 or make rows shorter than their pixels are refused, not trapped on.
struct WaylandFrameAttackTests {
    @Test func insaneFrameDescriptionsAreRefused() {
        typealias Shm = FrameState.Shm
        #expect(Shm(format: 0, width: 1920, height: 1080, stride: 7680).isSane)
        #expect(Shm(format: 0, width: 1366, height: 768, stride: 5504).isSane, "padded rows are fine")
        for bad in [Shm(format: 0, width: 0, height: 1080, stride: 7680), Shm(format: 0, width: 1920, height: 0, stride: 7680),
                    Shm(format: 0, width: .max, height: .max, stride: .max), Shm(format: 0, width: 1920, height: 1080, stride: 100),
                    Shm(format: 0, width: 16384, height: 16384, stride: 131072), Shm(format: 0, width: 20000, height: 10, stride: 80000)] {
            #expect(!bad.isSane, "\(bad)")
        }
    }
}
