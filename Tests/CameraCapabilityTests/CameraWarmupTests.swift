@testable import Config
import Foundation
@testable import Kit
import Media
@testable import TestSupport
import Testing

/// Which frame a cold camera.snap (and a camera.clip) uses, through the real binary and the fake
/// device: the first one on a camera without automatic exposure, gain or white balance; a later one
/// on a camera that reports them (the fake answers VIDIOC_QUERYCTRL/G_CTRL for the controls
/// OCN_FAKE_V4L2 gives it). The frame is read off the picture itself — the fake numbers the frames
/// it hands out and draws the number as its black bar, 8 px further right per frame — and from the
/// daemon's debug line, so no test depends on timing.
@Suite(.serialized) struct CameraWarmupTests {
    /// A 640x480 fake camera with `controls` ("exposure_auto=3,autogain=1"; "" = none).
    static func camera(controls: String = "", format: String = "YUYV", camera: String = "",
                       extraEnv: [String: String] = [:]) throws -> FakeCamera {
        var cam = try FakeCamera(formats: format, sizes: "640x480", camera: camera,
                                 extraEnv: extraEnv.merging(["OPENCLAW_NODE_LOG": "debug"]) { mine, _ in mine })
        if !controls.isEmpty { cam.env["OCN_FAKE_V4L2"]! += ":" + controls }
        return cam
    }

    /// The number of the fake's frame a picture shows, from where its moving bar starts (the top
    /// eighth of the picture; the bar is width/16 wide, 8 px further right each frame).
    static func frameNumber(_ img: DecodedImage) throws -> Int {
        let y = img.height / 16
        guard let start = (0..<img.width).first(where: { x in
            let p = img.pixel(x: x, y: y)
            return p.r < 64 && p.g < 64 && p.b < 64
        }) else { throw TestFailure("no bar in the top band") }
        return (start + 4) / 8
    }

    /// What the daemon logged for the snap: the frame it used, counted from STREAMON.
    static func loggedFrame(_ stderr: String) -> Int? {
        guard let r = stderr.range(of: "): frame "), let end = stderr[r.upperBound...].range(of: " of the stream") else { return nil }
        return Int(stderr[r.upperBound..<end.lowerBound])
    }

    /// A snap at full size; checks the picture and that the logged frame is the one in it.
    func snap(_ cam: FakeCamera, _ params: String = #"{"maxWidth": 640}"#) throws -> (frame: Int, log: String) {
        let (r, payload) = try cam.invoke("camera.snap", params)
        #expect(r.code == 0, "stderr: \(r.stderr)")
        let img = try CameraFakeDeviceTests.image(payload)
        let problems = FakeCamera.checkPattern(img, width: 640, height: 480)
        #expect(problems.isEmpty, "\(problems)")
        let frame = try Self.frameNumber(img)
        #expect(Self.loggedFrame(r.stderr) == frame, "\(r.stderr)")
        return (frame, r.stderr)
    }

    @Test(arguments: ["YUYV", "MJPG"])
    func cameraWithoutAutoControlsGivesItsFirstFrame(format: String) throws {
        let cam = try Self.camera(format: format); defer { cam.cleanup() }
        let (frame, log) = try snap(cam)
        #expect(frame == 0)
        #expect(log.contains("(no auto adjustments, no warm-up)"), "\(log)")
    }

    /// exposure_auto 3 is aperture priority, the mode UVC webcams start in; 0 is full auto.
    @Test(arguments: ["exposure_auto=3", "exposure_auto=0", "autogain=1", "auto_white_balance=1",
                      "exposure_auto=1,autogain=0,auto_white_balance=1"])
    func cameraWithAutoControlsStillWarmsUp(controls: String) throws {
        let cam = try Self.camera(controls: controls); defer { cam.cleanup() }
        let (frame, log) = try snap(cam)
        #expect(frame >= 3, "\(controls)")
        #expect(log.contains("warm-up 3 frames and 150 ms"), "\(log)")
    }

    /// Controls that exist but are all set to manual adjust nothing: no warm-up.
    @Test func autoControlsAllSetToManualMeanNoWarmup() throws {
        let cam = try Self.camera(controls: "exposure_auto=1,autogain=0,auto_white_balance=0"); defer { cam.cleanup() }
        #expect(try snap(cam).frame == 0)
    }

    /// delayMs counts toward the warm-up: after 300 ms (longer than its 150 ms) only the frame
    /// count is missing. The fake hands out one frame when the delay ends (the one it had ready),
    /// so frames 1 and 2 are thrown away and frame 3 — not 3 more after the delay — is the photo.
    @Test func framesDuringTheDelayCountTowardTheWarmup() throws {
        let cam = try Self.camera(controls: "exposure_auto=3"); defer { cam.cleanup() }
        #expect(try snap(cam, #"{"maxWidth": 640, "delayMs": 300}"#).frame == 3)
    }

    /// capabilities.camera.warmup "always": for a camera that adjusts itself without controls.
    @Test func warmupAlwaysWarmsUpACameraWithoutControls() throws {
        let cam = try Self.camera(camera: "warmup: 'always'"); defer { cam.cleanup() }
        #expect(try snap(cam).frame >= 3)
    }

    /// capabilities.camera.warmup "never": the first frame even from a camera with auto exposure.
    @Test func warmupNeverTakesTheFirstFrameOfAnAutoCamera() throws {
        let cam = try Self.camera(controls: "exposure_auto=3", camera: "warmup: 'never'"); defer { cam.cleanup() }
        let (frame, log) = try snap(cam)
        #expect(frame == 0)
        #expect(log.contains("(auto exposure, no warm-up)"), "\(log)")
    }

    @Test func warmupKeyRefusesAnUnknownMode() throws {
        let cam = try Self.camera(camera: "warmup: 'sometimes'"); defer { cam.cleanup() }
        let (r, _) = try cam.invoke("camera.snap")
        #expect(r.code != 0)
        #expect(r.stderr.contains("warmup"), "stderr: \(r.stderr)")
    }

    /// Without a warm-up the first frames are the picture, so ones the driver flags as damaged
    /// (V4L2_BUF_FLAG_ERROR) must be passed over: here zeros, not a picture (nor a JPEG).
    @Test(arguments: ["YUYV", "MJPG"])
    func framesFlaggedAsDamagedAreSkipped(format: String) throws {
        let cam = try Self.camera(format: format, extraEnv: ["OCN_FAKE_V4L2_CORRUPT": "2"]); defer { cam.cleanup() }
        #expect(try snap(cam).frame == 2)
    }

    /// Unplugged during the warm-up (after 2 of its frames): CAMERA_UNAVAILABLE, device released.
    @Test func deviceGoneDuringTheWarmupIsCameraUnavailable() throws {
        let cam = try Self.camera(controls: "exposure_auto=3", extraEnv: ["OCN_FAKE_V4L2_GONE_AFTER": "2"])
        defer { cam.cleanup() }
        try cam.expectSnapFailsUnplugged()
    }

    /// A clip records from (about) the first frame on a camera without controls, and after the
    /// warm-up on one with them. The clip drops the frame that waited while the encoder opened,
    /// so its first frame is 1 (2 if the fake had a second one ready) without a warm-up.
    @Test(arguments: ["", "exposure_auto=3"])
    func clipStartsAfterTheWarmupOnlyWhereThereIsOne(controls: String) throws {
        let cam = try Self.camera(controls: controls); defer { cam.cleanup() }
        let (r, payload) = try cam.invoke("camera.clip", #"{"durationMs": 500, "includeAudio": false}"#)
        #expect(r.code == 0, "stderr: \(r.stderr)")
        #expect(payload?["format"] == "mp4" && payload?["hasAudio"] == false, "\(r.stdout.prefix(200))")
        let data = try #require(Data(base64Encoded: payload?["base64"]?.stringValue ?? ""))
        let file = cam.dir + "/clip.mp4"
        try data.write(to: URL(fileURLWithPath: file))
        let first = try Self.frameNumber(try ImageChecks.frame(of: file, at: 0))
        if controls.isEmpty { #expect(first < 3) } else { #expect(first >= 3) }
    }

    /// Damaged frames at the start of a clip without a warm-up are skipped, not recorded (a
    /// half-size zero frame would fail the conversion).
    @Test func clipSkipsDamagedFrames() throws {
        let cam = try Self.camera(extraEnv: ["OCN_FAKE_V4L2_CORRUPT": "3"]); defer { cam.cleanup() }
        let (r, payload) = try cam.invoke("camera.clip", #"{"durationMs": 500, "includeAudio": false}"#)
        #expect(r.code == 0, "stderr: \(r.stderr)")
        #expect(payload?["format"] == "mp4", "\(r.stdout.prefix(200))")
    }
}
