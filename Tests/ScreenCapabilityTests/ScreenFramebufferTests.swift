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

/// The fbdev backend through the real `openclaw-node` binary, with Tests/fakes/fakefb.c preloaded
/// as the framebuffer (memfd-backed; padded rows and a panned, double-height virtual screen).
@Suite struct ScreenFramebufferTests {
    static func checkPattern(_ img: DecodedImage, width: Int, height: Int, tolerance: Int) {
        #expect(img.width == width && img.height == height)
        // Sample the middle of each region, away from edges that JPEG blurs.
        let points = [(width / 4, height / 4), (3 * width / 4, height / 4), (width / 4, 3 * height / 4),
                      (3 * width / 4, 3 * height / 4), (width / 2, height / 2), (width / 8, height - 8), (width - 8, 8)]
        for (x, y) in points {
            let want = QuadrantPattern.rgb(x: x, y: y, width: width, height: height)
            let got = img.pixel(x: x, y: y)
            #expect(ImageChecks.near(got, want, tolerance: tolerance), "(\(x),\(y)) is \(ImageChecks.hex(got)), want \(String(want, radix: 16))")
        }
    }

    static func invoke(bpp: Int, screen: String, params: String, width: Int = 320, height: Int = 240,
                       extraEnv: [String: String] = [:]) throws -> (ProcessResult, JSONValue?, String) {
        let dir = TestPaths.tempDir("fb")
        let fb = dir + "/fb0"
        // A placeholder file so `auto` sees a framebuffer; the fake answers open() of this path.
        _ = FileManager.default.createFile(atPath: fb, contents: Data())
        let config = ScreenTest.config(in: dir, screen: screen.replacingOccurrences(of: "FB", with: fb))
        var env = try FakeFramebuffer.environment(path: fb, bpp: bpp, width: width, height: height, home: dir)
        env.merge(extraEnv) { _, new in new }
        let r = try runProcess(TestPaths.nodeBinary, ["invoke", "screen.snapshot", "--local", "--compact", "--config", config,
                                                     "--params", params], env: env)
        return (r, JSONValue.parse(r.stdout), dir)
    }

    @Test(arguments: [16, 24, 32])
    func snapshotReadsTheFakeFramebuffer(bpp: Int) throws {
        let (r, payload, dir) = try Self.invoke(bpp: bpp, screen: "backend: 'fbdev', fbdev: 'FB'",
                                                params: #"{"format": "png"}"#)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        #expect(r.code == 0, "stderr: \(r.stderr)")
        guard let payload else { Issue.record("no JSON on stdout: \(r.stdout)"); return }
        #expect(payload["format"] == "png")
        #expect(payload["width"] == 320 && payload["height"] == 240)
        // PNG is lossless; RGB565 keeps 5/6/5 bits, and full-scale channels survive that exactly.
        Self.checkPattern(try ImageChecks.image(payload), width: 320, height: 240, tolerance: 0)
    }

    @Test(arguments: [16, 32])
    func jpegFromTheFramebufferIsEncodedInPlaceOrConverted(bpp: Int) throws {
        let (r, payload, dir) = try Self.invoke(bpp: bpp, screen: "backend: 'fbdev', fbdev: 'FB'",
                                                params: #"{"quality": 90}"#, width: 640, height: 480)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        #expect(r.code == 0, "stderr: \(r.stderr)")
        guard let payload else { Issue.record("no JSON on stdout: \(r.stdout)"); return }
        #expect(payload["format"] == "jpeg")
        Self.checkPattern(try ImageChecks.image(payload), width: 640, height: 480, tolerance: 24)
    }

    @Test func autoFallsBackToTheFramebufferWithoutADisplay() throws {
        let (r, payload, dir) = try Self.invoke(bpp: 32, screen: "backend: 'auto', fbdev: 'FB'",
                                                params: #"{"format": "png"}"#)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        #expect(r.code == 0, "stderr: \(r.stderr)")
        guard let payload else { Issue.record("no JSON on stdout: \(r.stdout)"); return }
        Self.checkPattern(try ImageChecks.image(payload), width: 320, height: 240, tolerance: 0)
    }

    @Test func framebufferHasOneScreen() throws {
        let (r, payload, dir) = try Self.invoke(bpp: 32, screen: "backend: 'fbdev', fbdev: 'FB'",
                                                params: #"{"screenIndex": 1}"#)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        #expect(r.code == 1)
        #expect(payload?["code"] == "INVALID_REQUEST")
        #expect(payload?["message"]?.stringValue?.contains("one screen") == true)
    }

    @Test func missingFramebufferIsScreenUnavailable() throws {
        let dir = TestPaths.tempDir("fb")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let config = ScreenTest.config(in: dir, screen: "backend: 'fbdev', fbdev: '\(dir)/missing-fb'")
        let r = try runProcess(TestPaths.nodeBinary, ["invoke", "screen.snapshot", "--local", "--compact", "--config", config],
                               env: ["HOME": dir, "PATH": "/usr/bin:/bin"])
        let payload = JSONValue.parse(r.stdout)
        #expect(r.code == 1)
        #expect(payload?["code"] == "SCREEN_UNAVAILABLE")
        #expect(payload?["message"]?.stringValue?.contains("cannot open framebuffer") == true)
    }

    @Test func disabledScreenIsScreenDisabled() throws {
        let dir = TestPaths.tempDir("fb")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let config = ScreenTest.config(in: dir, screen: "enabled: false")
        let r = try runProcess(TestPaths.nodeBinary, ["invoke", "screen.record", "--local", "--compact", "--config", config],
                               env: ["HOME": dir, "PATH": "/usr/bin:/bin"])
        #expect(r.code == 1)
        #expect(JSONValue.parse(r.stdout)?["code"] == "SCREEN_DISABLED")
    }

    @Test func recordFromTheFramebufferThroughTheBinary() throws {
        let dir = TestPaths.tempDir("fb")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let fb = dir + "/fb0"
        _ = FileManager.default.createFile(atPath: fb, contents: Data())
        let config = ScreenTest.config(in: dir, screen: "backend: 'fbdev', fbdev: '\(fb)'")
        let r = try runProcess(TestPaths.nodeBinary, ["invoke", "screen.record", "--local", "--compact", "--config", config,
                                                     "--params", #"{"durationMs": 1000, "fps": 5}"#],
                               env: try FakeFramebuffer.environment(path: fb, bpp: 16, home: dir))
        #expect(r.code == 0, "stderr: \(r.stderr)")
        guard let payload = JSONValue.parse(r.stdout), let data = Data(base64Encoded: payload["base64"]?.stringValue ?? "") else {
            Issue.record("no payload: \(r.stdout)"); return
        }
        let file = dir + "/clip.mp4"
        try data.write(to: URL(fileURLWithPath: file))
        let probe = try ImageChecks.ffprobe(file)
        #expect(probe["streams"]?.arrayValue?.first?["nb_read_frames"] == "5")
        let frame = try ImageChecks.frame(of: file, at: 0)
        #expect(ImageChecks.near(frame.pixel(x: 80, y: 60), 0xff0000, tolerance: 40))
        #expect(ImageChecks.near(frame.pixel(x: 240, y: 180), 0xffffff, tolerance: 40))
    }
}
