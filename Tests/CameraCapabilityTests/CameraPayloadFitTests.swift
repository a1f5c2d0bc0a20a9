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

/// A gateway with a small `policy.maxPayload`: the daemon (fake camera preloaded) re-encodes
/// snaps and lowers the clip bitrate so results fit, and the gateway (whose WebSocket refuses
/// bigger messages) receives them whole.
@Suite(.serialized) struct CameraPayloadFitTests {
    struct Harness {
        let cam: FakeCamera
        let gw: TestGateway
        let daemon: BackgroundProcess

        init(_ cam: FakeCamera, maxPayload: Int) throws {
            self.cam = cam
            gw = try TestGateway(stateFile: cam.dir + "/gw.json", args: ["--auto-approve", "--max-payload", String(maxPayload)])
            let text = "{ gateway: { url: '\(gw.url)' }, node: { stateDir: '\(cam.dir)/state' }, presence: { mode: 'always' } }"
            _ = FileManager.default.createFile(atPath: cam.config, contents: Data(text.utf8))
            daemon = try BackgroundProcess(TestPaths.nodeBinary, ["run", "--config", cam.config], env: cam.env)
            guard gw.waitFor("hello") != nil else { throw TestFailure("no hello: \(daemon.log)") }
        }

        func stop() { daemon.stop(); gw.stop(); cam.cleanup() }
    }

    @Test func snapIsReencodedToFitASmallMaxPayload() throws {
        let cam = try FakeCamera(formats: "YUYV", sizes: "1280x720")
        // Without the limit (local invoke, 25 MB), this snap is bigger than the gateway will take.
        let (_, unlimited) = try cam.invoke("camera.snap", #"{"quality": 100}"#)
        let unlimitedSize = unlimited?["base64"]?.stringValue?.utf8.count ?? 0
        #expect(unlimitedSize > 24 * 1024, "the test needs a snap over the limit; got \(unlimitedSize) bytes")
        let h = try Harness(cam, maxPayload: 24 * 1024); defer { h.stop() }
        let r = try #require(h.gw.invoke("camera.snap", paramsJSON: #"{"quality": 100}"#), "\(h.daemon.log)")
        #expect(r["ok"] == true, "\(r) \(h.daemon.log)")
        let p = try #require(r["payload"])
        let b64 = try #require(p["base64"]?.stringValue)
        #expect(b64.utf8.count < 24 * 1024 - 1024, "base64 \(b64.utf8.count) bytes")
        let img = try CameraFakeDeviceTests.image(p)
        let w = p["width"]?.intValue ?? 0, hgt = p["height"]?.intValue ?? 0
        #expect(img.width == w && img.height == hgt)
        #expect(FakeCamera.checkPattern(img, width: w, height: hgt, tolerance: 48).isEmpty)
        #expect(h.gw.schemaErrors.isEmpty)
    }

    @Test func clipBitrateFollowsTheMaxPayload() throws {
        let h = try Harness(try FakeCamera(formats: "YUYV", sizes: "640x480"), maxPayload: 160 * 1024); defer { h.stop() }
        let r = try #require(h.gw.invoke("camera.clip", paramsJSON: #"{"durationMs": 2000, "includeAudio": false}"#, wait: 30),
                             "\(h.daemon.log)")
        #expect(r["ok"] == true, "\(r) \(h.daemon.log)")
        let p = try #require(r["payload"])
        let data = try #require(Data(base64Encoded: p["base64"]?.stringValue ?? ""))
        #expect(Base64Size.of(data.count) < 160 * 1024)
        let file = h.cam.dir + "/clip.mp4"
        try data.write(to: URL(fileURLWithPath: file))
        let probe = try ImageChecks.ffprobe(file)
        #expect(probe["streams"]?.arrayValue?.first?["codec_name"] == "h264")
    }

    /// Too small for any clip: a clear PAYLOAD_TOO_LARGE up front, no recording.
    @Test func clipThatCannotFitIsRefused() throws {
        let h = try Harness(try FakeCamera(formats: "YUYV", sizes: "640x480"), maxPayload: 12 * 1024); defer { h.stop() }
        let r = try #require(h.gw.invoke("camera.clip", paramsJSON: #"{"durationMs": 1000}"#), "\(h.daemon.log)")
        #expect(r["ok"] == false)
        #expect(r["error"]?["code"] == "PAYLOAD_TOO_LARGE", "\(r)")
    }
}
