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

/// camera.* through the real `openclaw-node` binary with Tests/fakes/fakev4l2.c preloaded as the
/// V4L2 device (memfd-backed mmap streaming, YUYV, NV12 and MJPEG).
@Suite(.serialized) struct CameraFakeDeviceTests {
    static func image(_ payload: JSONValue?) throws -> DecodedImage {
        guard let b64 = payload?["base64"]?.stringValue, let data = Data(base64Encoded: b64) else {
            throw TestFailure("payload has no base64: \(String(describing: payload))")
        }
        return try ImageDecoder.decodeJPEG([UInt8](data))
    }

    @Test func listShowsTheCaptureDeviceOnly() throws {
        let cam = try FakeCamera(); defer { cam.cleanup() }
        let (r, payload) = try cam.invoke("camera.list")
        #expect(r.code == 0, "stderr: \(r.stderr)")
        let devices = try #require(payload?["devices"]?.arrayValue)
        #expect(devices.count == 1)
        #expect(devices.first?["id"]?.stringValue == cam.device)
        #expect(devices.first?["name"] == "Fake Camera 0")
        #expect(devices.first?["position"] == "unknown")
        #expect(devices.first?["deviceType"] == "v4l2")
    }

    @Test(arguments: ["YUYV", "MJPG", "NV12"])
    func snapMatchesThePattern(format: String) throws {
        let cam = try FakeCamera(formats: format, sizes: "640x480"); defer { cam.cleanup() }
        let (r, payload) = try cam.invoke("camera.snap")
        #expect(r.code == 0, "stderr: \(r.stderr)")
        #expect(payload?["format"] == "jpg")
        #expect(payload?["width"] == 640 && payload?["height"] == 480)
        let problems = FakeCamera.checkPattern(try Self.image(payload), width: 640, height: 480)
        #expect(problems.isEmpty, "\(problems)")
    }

    /// MJPEG at the final size goes out untouched: the fake encodes 4:2:2, the node's encoder 4:2:0.
    @Test func mjpegIsPassedThroughWhenNoScalingIsNeeded() throws {
        let cam = try FakeCamera(formats: "YUYV,MJPG", sizes: "640x480"); defer { cam.cleanup() }
        let (r, payload) = try cam.invoke("camera.snap", #"{"maxWidth": 640}"#)
        #expect(r.code == 0, "stderr: \(r.stderr)")
        let data = try #require(Data(base64Encoded: payload?["base64"]?.stringValue ?? ""))
        #expect(Self.sofSampling(data) == 0x21, "luma sampling factors of the first component")
    }

    /// NV12 rows padded to 64 bytes (600 px → 640-byte stride): bytesperline is honoured for
    /// both planes, or the quadrants would shear.
    @Test func nv12WithPaddedRowsKeepsThePicture() throws {
        let cam = try FakeCamera(formats: "NV12", sizes: "600x340"); defer { cam.cleanup() }
        let (r, payload) = try cam.invoke("camera.snap")
        #expect(r.code == 0, "stderr: \(r.stderr)")
        #expect(payload?["width"] == 600 && payload?["height"] == 340)
        let problems = FakeCamera.checkPattern(try Self.image(payload), width: 600, height: 340)
        #expect(problems.isEmpty, "\(problems)")
    }

    @Test(arguments: ["YUYV", "MJPG", "NV12"])
    func maxWidthScalesDown(format: String) throws {
        let cam = try FakeCamera(formats: format, sizes: "1280x720"); defer { cam.cleanup() }
        let (r, payload) = try cam.invoke("camera.snap", #"{"maxWidth": 320}"#)
        #expect(r.code == 0, "stderr: \(r.stderr)")
        #expect(payload?["width"] == 320 && payload?["height"] == 180)
        let problems = FakeCamera.checkPattern(try Self.image(payload), width: 320, height: 180)
        #expect(problems.isEmpty, "\(problems)")
    }

    @Test func defaultMaxWidthIs1600AndPicksTheLargestSize() throws {
        let cam = try FakeCamera(formats: "YUYV", sizes: "640x480,1280x720"); defer { cam.cleanup() }
        let (r, payload) = try cam.invoke("camera.snap")
        #expect(r.code == 0, "stderr: \(r.stderr)")
        #expect(payload?["width"] == 1280 && payload?["height"] == 720)
    }

    @Test func qualityChangesTheSizeAndAcceptsBothScales() throws {
        let cam = try FakeCamera(formats: "YUYV", sizes: "640x480"); defer { cam.cleanup() }
        var sizes: [Int] = []
        for q in ["0.05", "1", "30", "100"] {
            let (r, payload) = try cam.invoke("camera.snap", #"{"quality": \#(q)}"#)
            #expect(r.code == 0, "quality \(q): \(r.stderr)")
            sizes.append(payload?["base64"]?.stringValue?.count ?? 0)
        }
        #expect(sizes[0] < sizes[1], "quality 0.05 vs 1.0: \(sizes)")
        #expect(sizes[2] < sizes[3], "quality 30 vs 100: \(sizes)")
    }

    @Test func delayMsWaitsBeforeTheShot() throws {
        let cam = try FakeCamera(formats: "YUYV", sizes: "640x480"); defer { cam.cleanup() }
        let start = Date()
        let (r, _) = try cam.invoke("camera.snap", #"{"delayMs": 800}"#)
        #expect(r.code == 0, "stderr: \(r.stderr)")
        #expect(Date().timeIntervalSince(start) >= 0.8)
    }

    @Test(arguments: [(#"{"maxWidth": -5}"#, "maxWidth"), (#"{"quality": 7.5}"#, "quality"),
                      (#"{"delayMs": 20000}"#, "delayMs"), (#"{"deviceId": "video9"}"#, "deviceId"),
                      (#"{"format": "png"}"#, "format")])
    func badSnapParamsNameTheField(params: String, field: String) throws {
        let cam = try FakeCamera(); defer { cam.cleanup() }
        let (r, payload) = try cam.invoke("camera.snap", params)
        #expect(r.code == 1)
        #expect(payload?["code"] == "INVALID_REQUEST", "\(r.stdout)")
        #expect(payload?["message"]?.stringValue?.contains(field) == true, "\(r.stdout)")
    }

    @Test func busyDeviceIsCameraBusy() throws {
        let cam = try FakeCamera(formats: "YUYV", sizes: "640x480"); defer { cam.cleanup() }
        // ffmpeg's v4l2 input holds the device, as another application would.
        let other = try BackgroundProcess("/usr/bin/ffmpeg", ["-v", "error", "-f", "v4l2", "-i", cam.device, "-t", "30",
                                                              "-f", "null", "-"], env: cam.env)
        defer { other.stop() }
        #expect(waitUntil(timeout: 15) { cam.isHeld }, "ffmpeg did not start streaming: \(other.log)")
        let (r, payload) = try cam.invoke("camera.snap")
        #expect(r.code == 1)
        #expect(payload?["code"] == "CAMERA_BUSY", "\(r.stdout)")
    }

    /// Unplugged right after STREAMON: a camera without auto controls has no warm-up, so its
    /// very first frame is the one that must fail (CameraWarmupTests unplugs one during its warm-up).
    @Test func deviceDisappearingMidStreamIsCameraUnavailable() throws {
        let cam = try FakeCamera(formats: "YUYV", sizes: "640x480", extraEnv: ["OCN_FAKE_V4L2_GONE_AFTER": "0"])
        defer { cam.cleanup() }
        try cam.expectSnapFailsUnplugged()
    }

    @Test func disabledCameraIsCameraDisabled() throws {
        let cam = try FakeCamera(camera: "enabled: false"); defer { cam.cleanup() }
        let (r, payload) = try cam.invoke("camera.snap")
        #expect(r.code == 1)
        #expect(payload?["code"] == "CAMERA_DISABLED", "\(r.stdout)")
    }

    @Test func noDeviceMeansNotAdvertised() throws {
        let cam = try FakeCamera(); defer { cam.cleanup() }
        var env = cam.env
        env["OPENCLAW_NODE_CAMERA_DIR"] = cam.dir + "/nothing-here"
        let r = try runProcess(TestPaths.nodeBinary, ["invoke", "camera.list", "--local", "--compact", "--config", cam.config],
                               env: env)
        #expect(r.code == 1)
        #expect(JSONValue.parse(r.stdout)?["code"] == "CAMERA_UNAVAILABLE", "\(r.stdout)")
    }

    /// The first component's sampling byte in the JPEG's SOF0 segment (0x21 = 4:2:2, 0x22 = 4:2:0).
    static func sofSampling(_ jpeg: Data) -> UInt8? {
        let b = [UInt8](jpeg)
        var i = 2
        while i + 4 < b.count, b[i] == 0xFF {
            let marker = b[i + 1], length = Int(b[i + 2]) << 8 | Int(b[i + 3])
            if marker == 0xC0 || marker == 0xC1, i + 11 < b.count { return b[i + 11] }
            i += 2 + length
        }
        return nil
    }
}
