@testable import CameraCapability
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

/// camera.clip through the real binary and the fake device: a playable H.264 MP4 of the asked
/// duration whose frames show the pattern (ffprobe/ffmpeg check it).
@Suite(.serialized) struct CameraClipTests {
    @Test(arguments: ["YUYV", "MJPG", "NV12"])
    func clipIsAPlayableMP4OfTheAskedDuration(format: String) throws {
        let cam = try FakeCamera(formats: format, sizes: "640x480"); defer { cam.cleanup() }
        let (r, payload) = try cam.invoke("camera.clip", #"{"durationMs": 1000}"#)
        #expect(r.code == 0, "stderr: \(r.stderr)")
        #expect(payload?["format"] == "mp4")
        #expect(payload?["durationMs"] == 1000)
        #expect(payload?["hasAudio"] == false)
        let data = try #require(Data(base64Encoded: payload?["base64"]?.stringValue ?? ""))
        let file = cam.dir + "/clip.mp4"
        try data.write(to: URL(fileURLWithPath: file))
        let probe = try ImageChecks.ffprobe(file)
        let stream = probe["streams"]?.arrayValue?.first
        #expect(stream?["codec_name"] == "h264")
        #expect(stream?["width"] == 640 && stream?["height"] == 480)
        let duration = Double(probe["format"]?["duration"]?.stringValue ?? "") ?? 0
        #expect(abs(duration - 1.0) < 0.15, "duration \(duration)")
        // The fake delivers 30 frames/s; allow for a slow CI machine dropping some, or delaying
        // the fake's writer so that its catch-up frames arrive closer together (33 seen under load;
        // the clip stamps frames as they arrive).
        let frames = Int(stream?["nb_read_frames"]?.stringValue ?? "") ?? 0
        #expect(frames >= 10 && frames <= 36, "frames \(frames)")
        let problems = FakeCamera.checkPattern(try ImageChecks.frame(of: file, at: 0.5), width: 640, height: 480, tolerance: 40)
        #expect(problems.isEmpty, "\(problems)")
    }

    /// The default includeAudio with the fake microphone (ScreenAudioTests' `type file` PCM):
    /// H.264 plus an AAC track of the clip's length carrying the sine, and hasAudio true.
    @Test func clipRecordsTheMicrophoneAsAACByDefault() throws {
        let mic = try FakeMicrophone(); defer { mic.remove() }
        let cam = try FakeCamera(formats: "YUYV", sizes: "640x480",
                                 extraEnv: ["HOME": mic.home, "OPENCLAW_NODE_AUDIO_DEVICE": "fakemic", "OPENCLAW_NODE_LOG": "debug"])
        defer { cam.cleanup() }
        let (r, payload) = try cam.invoke("camera.clip", #"{"durationMs": 2000}"#)
        #expect(r.code == 0, "stderr: \(r.stderr)")
        #expect(payload?["hasAudio"] == true, "\(r.stderr)")
        #expect(payload?["durationMs"] == 2000)
        let data = try #require(Data(base64Encoded: payload?["base64"]?.stringValue ?? ""))
        let file = cam.dir + "/clip.mp4"
        try data.write(to: URL(fileURLWithPath: file))
        try AudioProbe.expectH264WithFakeMicAudio(file, seconds: 2.0)
        let problems = FakeCamera.checkPattern(try ImageChecks.frame(of: file, at: 1.0), width: 640, height: 480, tolerance: 40)
        #expect(problems.isEmpty, "\(problems)")
    }

    /// No capture device (FakeCamera's default): video only, hasAudio false, with or without includeAudio.
    @Test(arguments: [#"{"durationMs": 1000}"#, #"{"durationMs": 1000, "includeAudio": true}"#,
                      #"{"durationMs": 1000, "includeAudio": false}"#])
    func clipWithoutAMicrophoneIsVideoOnly(params: String) throws {
        let cam = try FakeCamera(formats: "YUYV", sizes: "640x480"); defer { cam.cleanup() }
        let (r, payload) = try cam.invoke("camera.clip", params)
        #expect(r.code == 0, "stderr: \(r.stderr)")
        #expect(payload?["hasAudio"] == false)
        let data = try #require(Data(base64Encoded: payload?["base64"]?.stringValue ?? ""))
        let file = cam.dir + "/clip.mp4"
        try data.write(to: URL(fileURLWithPath: file))
        let streams = try AudioProbe.streams(file)
        #expect(AudioProbe.stream(streams, "audio") == nil, "\(streams)")
        #expect(AudioProbe.stream(streams, "video")?["codec_name"] == "h264")
        #expect(abs(AudioProbe.duration(AudioProbe.stream(streams, "video")) - 1.0) < 0.15)
    }

    @Test func audioDeviceComesFromTheEnvironment() {
        let config = NodeConfig(environment: [:])
        #expect(CameraSettings(config: config, environment: [:]).audioDevice == "default")
        #expect(CameraSettings(config: config, environment: ["OPENCLAW_NODE_AUDIO_DEVICE": "fakemic"]).audioDevice == "fakemic")
        #expect(CameraClipParams().wantsAudio)
    }

    /// Unplugged after 15 frames: the clip starts, its recording fails with a clear code.
    @Test func deviceGoneDuringAClipIsCameraUnavailable() throws {
        let cam = try FakeCamera(formats: "YUYV", sizes: "640x480", extraEnv: ["OCN_FAKE_V4L2_GONE_AFTER": "15"])
        defer { cam.cleanup() }
        let (r, payload) = try cam.invoke("camera.clip", #"{"durationMs": 2000}"#)
        #expect(r.code == 1)
        #expect(payload?["code"] == "CAMERA_UNAVAILABLE", "\(r.stdout)")
        #expect(payload?["message"]?.stringValue?.contains("gone") == true, "\(r.stdout)")
    }

    @Test(arguments: [(#"{"durationMs": 1000000000}"#, "durationMs"), (#"{"durationMs": 100}"#, "durationMs"),
                      (#"{"format": "webm"}"#, "format"), (#"{"deviceId": "nope"}"#, "deviceId")])
    func badClipParamsNameTheField(params: String, field: String) throws {
        let cam = try FakeCamera(); defer { cam.cleanup() }
        let (r, payload) = try cam.invoke("camera.clip", params)
        #expect(r.code == 1)
        #expect(payload?["code"] == "INVALID_REQUEST", "\(r.stdout)")
        #expect(payload?["message"]?.stringValue?.contains(field) == true, "\(r.stdout)")
    }
}
