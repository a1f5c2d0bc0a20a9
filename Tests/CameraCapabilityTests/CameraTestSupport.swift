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

/// Tests/fakes/fakev4l2.c built once per test run, plus a private "device directory" of
/// placeholder files it answers for (OPENCLAW_NODE_CAMERA_DIR points the node at it).
struct FakeCamera {
    static let library: Result<String, TestFailure> = {
        let out = TestPaths.tempDir("fakev4l2") + "/libfakev4l2.so"
        guard let r = try? runProcess("/usr/bin/cc", ["-shared", "-fPIC", "-O2", "-Wall", "-o", out,
                                                     TestPaths.repoRoot + "/Tests/fakes/fakev4l2.c",
                                                     "-ldl", "-lturbojpeg", "-lpthread"]),
              r.code == 0 else { return .failure(TestFailure("cc could not build fakev4l2.c")) }
        return .success(out)
    }()

    let dir: String
    var device: String { dir + "/dev/video0" }
    var config: String { dir + "/config.json5" }
    /// The node's environment; tests may add devices or settings after init.
    var env: [String: String]

    /// One fake camera offering `formats` ("YUYV", "MJPG") at `sizes` ("640x480").
    init(formats: String = "YUYV,MJPG", sizes: String = "640x480", camera: String = "",
         extraEnv: [String: String] = [:]) throws {
        dir = TestPaths.tempDir("cam")
        try FileManager.default.createDirectory(atPath: dir + "/dev", withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: dir + "/dev/video0", contents: Data())
        // A device node the fake does not emulate: open works, QUERYCAP does not, so it is skipped.
        _ = FileManager.default.createFile(atPath: dir + "/dev/video1", contents: Data())
        let text = "{ node: { stateDir: '\(dir)/state' }, presence: { mode: 'always' }, capabilities: { camera: { \(camera) } } }"
        _ = FileManager.default.createFile(atPath: dir + "/config.json5", contents: Data(text.utf8))
        var e = ["LD_PRELOAD": try Self.library.get(), "OCN_FAKE_V4L2": "\(dir)/dev/video0:\(formats):\(sizes)",
                 "OPENCLAW_NODE_CAMERA_DIR": dir + "/dev", "HOME": dir, "TMPDIR": NSTemporaryDirectory(),
                 // No microphone unless a test brings one (FakeMicrophone): camera.clip records
                 // audio by default, and the machine's own "default" PCM must not leak in.
                 "OPENCLAW_NODE_AUDIO_DEVICE": "ocn-no-such-mic",
                 "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"]
        e.merge(extraEnv) { _, new in new }
        env = e
    }

    func cleanup() { try? FileManager.default.removeItem(atPath: dir) }

    /// `openclaw-node invoke <command> --local` through the fake; the JSON printed on stdout.
    func invoke(_ command: String, _ params: String = "{}", local: Bool = true) throws -> (ProcessResult, JSONValue?) {
        let r = try runProcess(TestPaths.nodeBinary, ["invoke", command, "--compact", "--config", config, "--params", params]
                                                    + (local ? ["--local"] : []), env: env)
        return (r, JSONValue.parse(r.stdout))
    }

    /// Whether some process holds the device (the fake flocks the placeholder while streaming).
    var isHeld: Bool {
        let fd = open(device, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        return flock(fd, LOCK_EX | LOCK_NB) != 0
    }

    /// A snap on a camera unplugged mid-stream fails CAMERA_UNAVAILABLE saying it is gone, and the
    /// device is released.
    func expectSnapFailsUnplugged() throws {
        let (r, payload) = try invoke("camera.snap")
        #expect(r.code == 1)
        #expect(payload?["code"] == "CAMERA_UNAVAILABLE", "\(r.stdout)")
        #expect(payload?["message"]?.stringValue?.contains("gone") == true, "\(r.stdout)")
        #expect(!isHeld, "the device must be released after the failure")
    }


    /// Compares points in the middle of each region (away from edges JPEG blurs and from the
    /// moving band) with the pattern, in the coordinates of an image of the given size.
    static func checkPattern(_ img: DecodedImage, width: Int, height: Int, tolerance: Int = 32) -> [String] {
        var problems: [String] = []
        if img.width != width || img.height != height { problems.append("size \(img.width)x\(img.height), want \(width)x\(height)") }
        let points = [(width / 4, height * 3 / 10), (3 * width / 4, height * 3 / 10), (width / 4, 3 * height / 4),
                      (3 * width / 4, 3 * height / 4), (width / 2, height / 2)]
        for (x, y) in points where x < img.width && y < img.height {
            let want = QuadrantPattern.rgb(x: x, y: y, width: width, height: height)
            let got = img.pixel(x: x, y: y)
            if !ImageChecks.near(got, want, tolerance: tolerance) {
                problems.append("(\(x),\(y)) is \(ImageChecks.hex(got)), want \(String(want, radix: 16))")
            }
        }
        return problems
    }
}
