@testable import Config
import Foundation
@testable import HostPresence
@testable import Kit
import Media
@testable import NodeCLI
@testable import Registry
@testable import Store
@testable import Support
@testable import TestSupport
import Testing

/// The fake is faithful enough for another V4L2 client: ffmpeg's v4l2 input captures from it.
@Suite struct CameraFFmpegTests {
    @Test(arguments: [("yuyv422", "YUYV"), ("mjpeg", "MJPG")])
    func ffmpegCapturesFromTheFake(inputFormat: String, fourcc: String) throws {
        let cam = try FakeCamera(formats: "YUYV,MJPG", sizes: "640x480"); defer { cam.cleanup() }
        let out = cam.dir + "/frame.png"
        let r = try runProcess("/usr/bin/ffmpeg", ["-v", "error", "-f", "v4l2", "-input_format", inputFormat,
                                                   "-video_size", "640x480", "-i", cam.device, "-frames:v", "1",
                                                   "-update", "1", "-y", out], env: cam.env)
        #expect(r.code == 0, "ffmpeg (\(fourcc)): \(r.stderr)")
        let img = try ImageDecoder.decodePNG([UInt8](Data(contentsOf: URL(fileURLWithPath: out))))
        let problems = FakeCamera.checkPattern(img, width: 640, height: 480)
        #expect(problems.isEmpty, "\(problems)")
    }
}
