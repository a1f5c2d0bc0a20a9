import CX11Capture
@testable import Config
import Foundation
@testable import HostPresence
@testable import Kit
import Media
@testable import NodeCLI
@testable import Registry
@testable import Runtime
@testable import ScreenCapability
@testable import Store
@testable import Support
import Testing

/// A tiny X client for the screen tests: paints known rectangles on root windows, moves the
/// pointer and defines RandR monitors. Owns its Display; one test thread at a time.
final class XPainter {
    let display: OpaquePointer

    init(_ name: String) throws {
        guard let d = XOpenDisplay(name) else { throw TestFailure("cannot open \(name)") }
        display = d
    }

    deinit { XCloseDisplay(display) }

    func root(_ screen: Int32? = nil) -> Window {
        cx11cap_root_window(display, screen ?? cx11cap_default_screen(display))
    }

    /// Fills a rectangle of `screen`'s root window with 0xRRGGBB (a TrueColor pixel at depth 24).
    func fill(screen: Int32? = nil, x: Int, y: Int, width: Int, height: Int, rgb: UInt32) {
        let window = root(screen)
        let gc = XCreateGC(display, window, 0, nil)
        XSetForeground(display, gc, UInt(rgb))
        XFillRectangle(display, window, gc, Int32(x), Int32(y), UInt32(width), UInt32(height))
        XFreeGC(display, gc)
        XSync(display, 0)
    }

    func warpPointer(screen: Int32? = nil, x: Int, y: Int) {
        XWarpPointer(display, 0, root(screen), 0, 0, 0, 0, Int32(x), Int32(y))
        XSync(display, 0)
    }

    /// Defines a RandR 1.5 monitor without outputs (like `xrandr --setmonitor NAME geometry none`).
    func setMonitor(_ name: String, x: Int, y: Int, width: Int, height: Int) {
        guard let m = XRRAllocateMonitor(display, 0) else { return }
        m.pointee.name = XInternAtom(display, name, 0)
        m.pointee.x = Int32(x); m.pointee.y = Int32(y)
        m.pointee.width = Int32(width); m.pointee.height = Int32(height)
        m.pointee.mwidth = Int32(width / 4); m.pointee.mheight = Int32(height / 4)
        XRRSetMonitor(display, root(), m)
        XRRFreeMonitors(m)
        XSync(display, 0)
    }
}

enum ScreenTest {
    static let bigPayload = 25 * 1024 * 1024

    static func capability(display: String, shm: Bool = true) -> ScreenCapability {
        ScreenCapability(settings: ScreenSettings(backend: .x11, display: display, useSharedMemory: shm))
    }

    /// Invokes through the command's real params decoder (the dispatcher's path after its gates).
    static func invoke(_ cap: ScreenCapability, _ command: ScreenCommand, _ params: String = "{}",
                       maxPayload: Int = bigPayload, timeoutMs: Int? = nil) async throws(NodeError) -> JSONValue {
        try await runCommand(cap, command.rawValue, params, deadline: timeoutMs.map { ContinuousClock.now + .milliseconds($0) },
                             maxPayloadBytes: maxPayload)
    }

    /// Starts a long screen.record, cancels it after 0.5 s: it must end within 3 s as CANCELLED.
    static func expectRecordingCancelsPromptly(_ cap: ScreenCapability, _ params: String) async throws {
        let task = Task { () async throws(NodeError) -> JSONValue in try await invoke(cap, .record, params) }
        try await Task.sleep(for: .milliseconds(500))
        let cancelledAt = ContinuousClock.now
        task.cancel()
        let result = await task.result
        #expect(ContinuousClock.now - cancelledAt < .seconds(3))
        guard case .failure(let e) = result else { Issue.record("a cancelled recording must not succeed"); return }
        #expect((e as? NodeError)?.code == "CANCELLED")
    }

    static func image(_ payload: JSONValue) throws -> DecodedImage {
        guard let b64 = payload["base64"]?.stringValue, let data = Data(base64Encoded: b64) else {
            throw TestFailure("payload has no base64: \(payload)")
        }
        return payload["format"]?.stringValue == "png" ? try ImageDecoder.decodePNG([UInt8](data)) : try ImageDecoder.decodeJPEG([UInt8](data))
    }

    static func near(_ p: (r: UInt8, g: UInt8, b: UInt8), _ rgb: UInt32, tolerance: Int = 16) -> Bool {
        abs(Int(p.r) - Int(rgb >> 16 & 0xff)) <= tolerance && abs(Int(p.g) - Int(rgb >> 8 & 0xff)) <= tolerance
            && abs(Int(p.b) - Int(rgb & 0xff)) <= tolerance
    }

    static func hex(_ p: (r: UInt8, g: UInt8, b: UInt8)) -> String {
        String(format: "%02x%02x%02x", p.r, p.g, p.b)
    }

    /// A config file for the CLI tests (capabilities.screen plus a private stateDir).
    static func config(in dir: String, screen: String) -> String {
        let path = dir + "/config.json5"
        let text = "{ node: { stateDir: '\(dir)/state' }, presence: { mode: 'always' }, capabilities: { screen: { \(screen) } } }"
        _ = FileManager.default.createFile(atPath: path, contents: Data(text.utf8))
        return path
    }

    static func ffprobe(_ file: String) throws -> JSONValue {
        let r = try runProcess("/usr/bin/ffprobe", ["-v", "error", "-count_frames", "-print_format", "json",
                                                     "-show_entries", "stream=codec_name,width,height,nb_read_frames:format=duration",
                                                     file])
        guard r.code == 0, let v = JSONValue.parse(r.stdout) else { throw TestFailure("ffprobe failed: \(r.stderr)") }
        return v
    }

    /// One frame of `file` at `seconds` (negative = from the end), decoded.
    static func frame(of file: String, at seconds: Double) throws -> DecodedImage {
        let out = TestPaths.tempDir("frame") + "/f.png"
        defer { try? FileManager.default.removeItem(atPath: (out as NSString).deletingLastPathComponent) }
        let seek = seconds < 0 ? ["-sseof", String(seconds)] : ["-ss", String(seconds)]
        let r = try runProcess("/usr/bin/ffmpeg", ["-v", "error"] + seek + ["-i", file, "-frames:v", "1", "-y", out])
        guard r.code == 0 else { throw TestFailure("ffmpeg frame extraction failed: \(r.stderr)") }
        return try ImageDecoder.decodePNG([UInt8](Data(contentsOf: URL(fileURLWithPath: out))))
    }
}

/// Tests/fakes/fakefb.c built once per test run with the system C compiler.
enum FakeFramebuffer {
    static let library: Result<String, TestFailure> = {
        let dir = TestPaths.tempDir("fakefb")
        let out = dir + "/libfakefb.so"
        guard let r = try? runProcess("/usr/bin/cc", ["-shared", "-fPIC", "-O2", "-Wall", "-o", out,
                                                     TestPaths.repoRoot + "/Tests/fakes/fakefb.c", "-ldl"]),
              r.code == 0 else { return .failure(TestFailure("cc could not build fakefb.c")) }
        return .success(out)
    }()


    /// Environment for a node process that sees the fake at `path`.
    static func environment(path: String, bpp: Int, width: Int = 320, height: Int = 240, home: String) throws -> [String: String] {
        ["LD_PRELOAD": try library.get(), "FAKEFB_PATH": path, "FAKEFB_BPP": String(bpp),
         "FAKEFB_WIDTH": String(width), "FAKEFB_HEIGHT": String(height), "HOME": home,
         "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"]
    }
}
