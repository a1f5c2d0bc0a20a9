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

/// camera.* inside the daemon (control socket), where the warm-device cache and the presence gate live.
@Suite(.serialized) struct CameraDaemonTests {
    static func daemon(_ cam: FakeCamera) throws -> BackgroundProcess {
        let d = try BackgroundProcess(TestPaths.nodeBinary, ["run", "--config", cam.config], env: cam.env)
        guard waitForDaemon(stateDir: cam.dir + "/state", d) else {
            throw TestFailure("daemon did not start: \(d.log)")
        }
        return d
    }

    /// A snap leaves the camera streaming for the idle period (the next snap is fast), and then the
    /// camera is released so other applications can open it.
    @Test func warmDeviceIsReleasedAfterTheIdlePeriod() throws {
        let cam = try FakeCamera(formats: "YUYV", sizes: "640x480", extraEnv: ["OPENCLAW_NODE_CAMERA_IDLE_MS": "1500"])
        defer { cam.cleanup() }
        let d = try Self.daemon(cam); defer { d.stop() }
        let (first, p1) = try cam.invoke("camera.snap", local: false)
        #expect(first.code == 0, "\(first.stderr) \(d.log)")
        #expect(cam.isHeld, "the camera should stay open while warm")
        let (second, p2) = try cam.invoke("camera.snap", local: false)
        #expect(second.code == 0)
        #expect(FakeCamera.checkPattern(try CameraFakeDeviceTests.image(p1), width: 640, height: 480).isEmpty)
        #expect(FakeCamera.checkPattern(try CameraFakeDeviceTests.image(p2), width: 640, height: 480).isEmpty)
        #expect(waitUntil(timeout: 10) { !cam.isHeld }, "the camera was not released after the idle period")
    }

    /// A camera plugged in after the daemon started is used without a restart: the snap that
    /// finds camera unavailable has it probed again.
    @Test func aCameraPluggedInLaterIsUsed() throws {
        let cam = try FakeCamera(formats: "YUYV", sizes: "640x480")
        defer { cam.cleanup() }
        try FileManager.default.removeItem(atPath: cam.device)
        let d = try Self.daemon(cam); defer { d.stop() }
        let (before, refused) = try cam.invoke("camera.snap", local: false)
        #expect(before.code == 1 && refused?["code"] == "CAMERA_UNAVAILABLE", "\(before.stdout) \(before.stderr)")
        // Plugged in: the device node appears.
        _ = FileManager.default.createFile(atPath: cam.device, contents: Data())
        let (after, shot) = try cam.invoke("camera.snap", local: false)
        #expect(after.code == 0, "\(after.stdout.prefix(300)) \(after.stderr)\n\(d.log.suffix(1500))")
        #expect(FakeCamera.checkPattern(try CameraFakeDeviceTests.image(shot), width: 640, height: 480).isEmpty)
        // The daemon's output reaches the test's copy of its log a moment later.
        #expect(waitUntil(timeout: 5) { d.log.contains("can serve now (probed again): camera") }, "\(d.log.suffix(1500))")
    }

    @Test func backgroundPresenceRefusesCamera() throws {
        let cam = try FakeCamera(formats: "YUYV", sizes: "640x480")
        defer { cam.cleanup() }
        // presence.mode 'always' pins foreground; use manual and switch to background.
        let text = "{ node: { stateDir: '\(cam.dir)/state' }, presence: { mode: 'manual' } }"
        _ = FileManager.default.createFile(atPath: cam.config, contents: Data(text.utf8))
        let d = try Self.daemon(cam); defer { d.stop() }
        let bg = try runProcess(TestPaths.nodeBinary, ["presence", "background", "--config", cam.config], env: cam.env)
        #expect(bg.code == 0, "\(bg.stderr)")
        for command in ["camera.list", "camera.snap"] {
            let (r, payload) = try cam.invoke(command, local: false)
            #expect(r.code == 1)
            #expect(payload?["code"] == "NODE_BACKGROUND_UNAVAILABLE", "\(command): \(r.stdout) \(r.stderr)")
        }
    }
}
