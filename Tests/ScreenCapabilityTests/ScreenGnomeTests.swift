@testable import Config
import DesktopSession
import Foundation
@testable import Kit
import Media
@testable import ScreenCapability
@testable import Support
@testable import TestSupport
import Testing

/// screen.snapshot and screen.record on a real GNOME (gnome-shell 43 headless, two virtual
/// monitors) through Mutter's screen cast and PipeWire: each monitor is a screenIndex, its pixels
/// are the probe window GNOME shows there. One GNOME session serves the whole test (it takes a few
/// seconds to start).
@Suite(.serialized, .enabled(if: GnomeShell.available, "needs root, gnome-shell, PipeWire and GTK 4 (scripts/setup installs them)"))
struct ScreenGnomeTests {
    @Test func monitorsAreScreenIndexesWithExactPixelsAndAStillScreenRecordsItsDuration() async throws {
        let gnome = try GnomeShell(monitors: [(1280, 720, "#ff0000"), (800, 600, "#0000ff")])
        defer { gnome.stop() }
        let cap = ScreenCapability(settings: ScreenSettings(backend: .gnome, sessionBus: gnome.sessionBus, pipewire: .socket(gnome.pipewireSocket)))
        #expect(await cap.availability() == .available)

        let left = try await ScreenTest.invoke(cap, .snapshot, #"{"screenIndex": 0, "format": "png", "maxWidth": 1280, "includePointer": false}"#)
        let right = try await ScreenTest.invoke(cap, .snapshot, #"{"screenIndex": 1, "format": "png", "includePointer": false}"#)
        #expect(left["width"] == 1280 && left["height"] == 720, "\(left["width"] ?? nil)x\(left["height"] ?? nil)")
        #expect(right["width"] == 800 && right["height"] == 600, "\(right["width"] ?? nil)x\(right["height"] ?? nil)")
        let a = try ImageChecks.image(left), b = try ImageChecks.image(right)
        // The probe windows are solid and fullscreen: a grid of pixels, exactly (PNG is lossless).
        for y in stride(from: 0, to: 720, by: 47) { for x in stride(from: 0, to: 1280, by: 53) { #expect(ImageChecks.near(a.pixel(x: x, y: y), 0xff0000, tolerance: 0), "(\(x),\(y))") } }
        for y in stride(from: 0, to: 600, by: 31) { for x in stride(from: 0, to: 800, by: 37) { #expect(ImageChecks.near(b.pixel(x: x, y: y), 0x0000ff, tolerance: 0), "(\(x),\(y))") } }
        #expect(left["displayFrameId"] != right["displayFrameId"])
        do { _ = try await ScreenTest.invoke(cap, .snapshot, #"{"screenIndex": 2}"#); Issue.record("expected an error") } catch {
            #expect(error.message.contains("2 monitor(s)") && error.message.contains("Meta-0"), "\(error.message)")
        }

        // auto, in a session whose compositor is GNOME's (no wlr-screencopy) and whose DISPLAY is
        // not the screen: Mutter's screen cast, and a JPEG close to the colour.
        let auto = ScreenCapability(settings: ScreenSettings(backend: .auto, display: ":1999", waylandDisplay: gnome.runtimeDir + "/wayland-0",
                                                             sessionBus: gnome.sessionBus, pipewire: .socket(gnome.pipewireSocket)))
        let jpeg = try ImageChecks.image(try await ScreenTest.invoke(auto, .snapshot, #"{"screenIndex": 1, "includePointer": false}"#))
        #expect(ImageChecks.near(jpeg.pixel(x: 400, y: 300), 0x0000ff, tolerance: 12))

        // Mutter sends a frame only when the screen changes: a still screen still makes a video
        // of the asked duration, every frame the window's colour.
        let payload = try await ScreenTest.invoke(cap, .record, #"{"screenIndex": 1, "durationMs": 2000, "fps": 10}"#, timeoutMs: 30_000)
        let file = try ScreenRecordTests.write(payload)
        let probe = try ImageChecks.ffprobe(file)
        let stream = probe["streams"]?.arrayValue?.first
        #expect(stream?["width"] == 800 && stream?["height"] == 600, "\(probe)")
        let frames = Int(stream?["nb_read_frames"]?.stringValue ?? "") ?? 0
        // Mutter sent one frame; the clip repeats it (fewer than 20 when a debug build encodes slowly:
        // the pacer skips slots rather than stretch the clip).
        #expect((5...21).contains(frames), "2 s at 10 fps: \(frames) frames")
        let duration = Double(probe["format"]?["duration"]?.stringValue ?? "") ?? 0
        #expect(abs(duration - 2.0) < 0.25, "duration \(duration)")
        let last = try ImageChecks.frame(of: file, at: 1.8)
        #expect(ImageChecks.near(last.pixel(x: 400, y: 300), 0x0000ff, tolerance: 16))
    }
}
