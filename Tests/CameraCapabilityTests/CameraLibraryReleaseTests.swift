@testable import Config
import Foundation
@testable import Kit
@testable import Support
@testable import TestSupport
import Testing

/// node.releaseIdleLibrariesAfter in the daemon: after a camera.clip, FFmpeg's codec libraries
/// leave the process's address space once the period has passed without a recording (read from
/// /proc/<pid>/maps), and the next clip loads them again; 0 keeps them.
@Suite(.serialized) struct CameraLibraryReleaseTests {
    /// A daemon on a fake 640x480 YUYV camera with `releaseAfter` seconds; the warm camera (and the
    /// stream it keeps) is let go after 1 s.
    static func daemon(_ cam: FakeCamera, releaseAfter: Int) throws -> BackgroundProcess {
        let text = "{ node: { stateDir: '\(cam.dir)/state', releaseIdleLibrariesAfter: \(releaseAfter) }, presence: { mode: 'always' } }"
        _ = FileManager.default.createFile(atPath: cam.config, contents: Data(text.utf8))
        return try CameraDaemonTests.daemon(cam)
    }

    /// Whether `library` is in the process's address space. Read to the end with FileHandle:
    /// String(contentsOfFile:) stops after the first 4 KiB of a /proc file.
    static func mapped(_ pid: Int32, _ library: String) -> Bool {
        guard let h = FileHandle(forReadingAtPath: "/proc/\(pid)/maps") else { return false }
        defer { try? h.close() }
        return String(decoding: h.readDataToEndOfFile(), as: UTF8.self).contains(library)
    }

    /// How many times the daemon logged that the codec libraries were let go.
    static func releases(_ d: BackgroundProcess) -> Int {
        d.log.components(separatedBy: "libavcodec, libavformat and libavutil released").count - 1
    }

    static func clip(_ cam: FakeCamera, _ d: BackgroundProcess) throws {
        let (r, payload) = try cam.invoke("camera.clip", #"{"durationMs": 500, "includeAudio": false}"#, local: false)
        #expect(r.code == 0, "\(r.stdout) \(r.stderr) \(d.log)")
        let data = try #require(Data(base64Encoded: payload?["base64"]?.stringValue ?? ""))
        let file = cam.dir + "/clip.mp4"
        try data.write(to: URL(fileURLWithPath: file))
        let stream = try ImageChecks.ffprobe(file)["streams"]?.arrayValue?.first
        #expect(stream?["codec_name"] == "h264" && stream?["width"] == 640, "\(String(describing: stream))")
    }

    @Test func codecLibrariesAreUnloadedAfterTheIdlePeriodAndLoadedAgainForTheNextClip() throws {
        let cam = try FakeCamera(formats: "YUYV", sizes: "640x480", extraEnv: ["OPENCLAW_NODE_CAMERA_IDLE_MS": "1000"])
        defer { cam.cleanup() }
        let d = try Self.daemon(cam, releaseAfter: 1); defer { d.stop() }
        #expect(!Self.mapped(d.pid, "libavcodec"), "nothing has recorded yet")
        try Self.clip(cam, d)
        #expect(waitUntil(timeout: 30) { Self.releases(d) == 1 }, "no release logged: \(d.log)")
        #expect(waitUntil(timeout: 30) { !Self.mapped(d.pid, "libavcodec") }, "libavcodec still mapped: \(d.log)")
        #expect(waitUntil(timeout: 30) { !Self.mapped(d.pid, "libavformat") && !Self.mapped(d.pid, "libswscale") && !Self.mapped(d.pid, "libavutil") },
                "libavformat, libswscale or libavutil still mapped")
        // Loaded again, transparently.
        try Self.clip(cam, d)
        #expect(waitUntil(timeout: 30) { Self.releases(d) == 2 }, "the second clip's libraries were not released: \(d.log)")
        #expect(waitUntil(timeout: 30) { !Self.mapped(d.pid, "libavcodec") }, "libavcodec still mapped after the second clip")
        #expect(d.isRunning)
    }

    @Test func zeroKeepsTheCodecLibrariesLoaded() throws {
        let cam = try FakeCamera(formats: "YUYV", sizes: "640x480", extraEnv: ["OPENCLAW_NODE_CAMERA_IDLE_MS": "1000"])
        defer { cam.cleanup() }
        let d = try Self.daemon(cam, releaseAfter: 0); defer { d.stop() }
        try Self.clip(cam, d)
        #expect(Self.mapped(d.pid, "libavcodec"), "the clip did not load libavcodec")
        // Longer than the period the test above waits for, and past the camera's own release.
        #expect(!waitUntil(timeout: 4) { !Self.mapped(d.pid, "libavcodec") }, "libavcodec was unloaded with releaseIdleLibrariesAfter 0")
        try Self.clip(cam, d)
        #expect(Self.releases(d) == 0)
    }
}
