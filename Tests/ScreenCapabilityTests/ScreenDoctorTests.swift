import Foundation
@testable import Support
@testable import TestSupport
import Testing

/// doctor loads what the screen bundle opens only on first use (libswscale, the video library), so
/// a missing library is named before the first scaled snapshot or recording fails.
struct ScreenDoctorTests {
    @Test func doctorLoadTestsTheLibrariesOfFirstUse() throws {
        let e = CLIEnv("capabilities: { screen: { enabled: true, backend: 'x11', display: ':99' }, camera: { enabled: false } }")
        defer { e.cleanup() }
        let r = try e.run(["doctor", "--config", e.config])
        #expect(r.stdout.contains("screen: image scaling: libswscale loads"), "\(r.stdout)")
        #expect(r.stdout.contains("screen: recording: the video library (libavcodec, libavformat) loads"), "\(r.stdout)")
        // Which H.264 encoder a recording gets: no V4L2 M2M device here, so libx264, saying why not the hardware one.
        #expect(r.stdout.contains("screen: recording: H.264 encoder libx264; not used: h264_v4l2m2m: does not open"), "\(r.stdout)")
    }
}
