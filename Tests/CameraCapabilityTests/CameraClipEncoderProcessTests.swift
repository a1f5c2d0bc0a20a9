@testable import Config
import Foundation
@testable import Kit
@testable import Support
@testable import TestSupport
import Testing

/// camera.clip in the daemon is encoded in a process of its own (`openclaw-node video-encoder`):
/// FFmpeg never enters the daemon's address space, the memory a clip used is given back once it
/// is done, and the encoder neither outlives the clip or the daemon nor takes the daemon down
/// when it dies.
@Suite(.serialized) struct CameraClipEncoderProcessTests {
    /// A daemon on a fake 640x480 YUYV camera whose warm stream is let go after 1 s.
    static func daemon(_ cam: FakeCamera) throws -> BackgroundProcess {
        let text = "{ node: { stateDir: '\(cam.dir)/state', releaseIdleLibrariesAfter: 5 }, presence: { mode: 'always' } }"
        _ = FileManager.default.createFile(atPath: cam.config, contents: Data(text.utf8))
        return try CameraDaemonTests.daemon(cam)
    }

    static func camera() throws -> FakeCamera {
        try FakeCamera(formats: "YUYV", sizes: "640x480", extraEnv: ["OPENCLAW_NODE_CAMERA_IDLE_MS": "1000"])
    }

    static func rssKiB(_ pid: Int32) -> Int {
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
        return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
    }

    static func clip(_ cam: FakeCamera, _ d: BackgroundProcess, durationMs: Int = 500) throws {
        let (r, payload) = try cam.invoke("camera.clip", #"{"durationMs": \#(durationMs), "includeAudio": false}"#, local: false)
        #expect(r.code == 0, "\(r.stdout) \(r.stderr) \(d.log)")
        let data = try #require(Data(base64Encoded: payload?["base64"]?.stringValue ?? ""))
        let file = cam.dir + "/clip.mp4"
        try data.write(to: URL(fileURLWithPath: file))
        let stream = try ImageChecks.ffprobe(file)["streams"]?.arrayValue?.first
        #expect(stream?["codec_name"] == "h264" && stream?["width"] == 640, "\(String(describing: stream))")
    }

    /// A clip started by the CLI in the background, for tests that act while it records.
    static func clipInBackground(_ cam: FakeCamera, durationMs: Int) throws -> BackgroundProcess {
        try BackgroundProcess(TestPaths.nodeBinary, ["invoke", "camera.clip", "--compact", "--config", cam.config,
                                                     "--params", #"{"durationMs": \#(durationMs), "includeAudio": false}"#], env: cam.env)
    }

    @Test func theDaemonNeverMapsFFmpegAndGivesTheMemoryBack() throws {
        let cam = try Self.camera()
        defer { cam.cleanup() }
        let d = try Self.daemon(cam); defer { d.stop() }
        // Idle once the daemon answers on its control socket (its bundles are loaded by then).
        let status = try runProcess(TestPaths.nodeBinary, ["status", "--config", cam.config], env: cam.env)
        #expect(status.code == 0, "\(status.stdout) \(status.stderr)")
        let idle = Self.rssKiB(d.pid)
        // Watched while it records: the encoder is a child process, and FFmpeg is mapped there only.
        let running = try Self.clipInBackground(cam, durationMs: 2000)
        var encoder: Int32?
        #expect(waitUntil(timeout: 10) { encoder = EncoderProcesses.children(of: d.pid).first; return encoder != nil }, "no encoder process: \(d.log)")
        if let encoder { #expect(waitUntil(timeout: 10) { EncoderProcesses.maps(encoder, "libavcodec") }, "the encoder does not map libavcodec") }
        #expect(!EncoderProcesses.maps(d.pid, "libavcodec") && !EncoderProcesses.maps(d.pid, "libavformat") && !EncoderProcesses.maps(d.pid, "libx264"))
        #expect(waitUntil(timeout: 20) { !running.isRunning })
        #expect(running.stop() == 0, "\(running.log)")
        #expect(waitUntil(timeout: 5) { EncoderProcesses.children(of: d.pid).isEmpty }, "the encoder outlived its clip")
        #expect(!EncoderProcesses.maps(d.pid, "libavcodec"))
        // Once the warm camera is let go, the daemon is back where it was before the clip.
        #expect(waitUntil(timeout: 10) { !cam.isHeld })
        var after = 0
        #expect(waitUntil(timeout: 10) { after = Self.rssKiB(d.pid); return after - idle <= 3 * 1024 },
                "RSS idle \(idle) KiB, after the clip \(after) KiB")
        try Self.clip(cam, d)
    }

    @Test func anEncoderThatDiesFailsTheClipNotTheDaemon() throws {
        let cam = try Self.camera()
        defer { cam.cleanup() }
        let d = try Self.daemon(cam); defer { d.stop() }
        let running = try Self.clipInBackground(cam, durationMs: 4000)
        var encoder: Int32?
        #expect(waitUntil(timeout: 10) { encoder = EncoderProcesses.children(of: d.pid).first; return encoder != nil }, "no encoder process: \(d.log)")
        if let encoder { kill(encoder, SIGKILL) }
        #expect(waitUntil(timeout: 20) { !running.isRunning })
        #expect(running.stop() == 1)
        #expect(running.log.contains("video encoder process"), "\(running.log)")
        #expect(d.isRunning, "the daemon survived its encoder")
        #expect(waitUntil(timeout: 10) { !cam.isHeld }, "the camera was released after the failure")
        try Self.clip(cam, d)
    }

    @Test func theEncoderGoesWithTheDaemon() throws {
        let cam = try Self.camera()
        defer { cam.cleanup() }
        let d = try Self.daemon(cam)
        let running = try Self.clipInBackground(cam, durationMs: 4000)
        defer { _ = running.stop() }
        var encoder: Int32?
        #expect(waitUntil(timeout: 10) { encoder = EncoderProcesses.children(of: d.pid).first; return encoder != nil }, "no encoder process: \(d.log)")
        kill(d.pid, SIGKILL)
        _ = d.stop()
        if let encoder {
            #expect(waitUntil(timeout: 10) { kill(encoder, 0) != 0 }, "the encoder outlived the daemon")
        }
    }
}
