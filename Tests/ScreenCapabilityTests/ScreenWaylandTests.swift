@testable import Config
import Foundation
@testable import Kit
import Media
@testable import ScreenCapability
@testable import Support
@testable import TestSupport
import Testing

/// screen.snapshot and screen.record on a real wlroots compositor (sway, headless backend) through
/// wlr-screencopy: each output is a screenIndex, pixels are what the compositor shows.
@Suite(.serialized, .enabled(if: Sway.available, "needs root and Debian's sway (scripts/setup installs it)"))
struct ScreenWaylandTests {
    static func capability(_ sway: Sway, backend: ScreenSettings.Backend = .wayland) -> ScreenCapability {
        ScreenCapability(settings: ScreenSettings(backend: backend, waylandDisplay: sway.socket))
    }

    @Test func twoOutputsAreTwoScreenIndexesWithTheirOwnPixels() async throws {
        let sway = try Sway(outputs: [(640, 480, "#ff0000"), (320, 240, "#00ff00")])
        defer { sway.stop() }
        let cap = Self.capability(sway)
        #expect(await cap.availability() == .available)
        let left = try await ScreenTest.invoke(cap, .snapshot, #"{"screenIndex": 0, "format": "png", "includePointer": false}"#)
        let right = try await ScreenTest.invoke(cap, .snapshot, #"{"screenIndex": 1, "format": "png", "includePointer": false}"#)
        #expect(left["width"] == 640 && left["height"] == 480, "\(left["width"] ?? nil)x\(left["height"] ?? nil)")
        #expect(right["width"] == 320 && right["height"] == 240)
        let a = try ImageChecks.image(left), b = try ImageChecks.image(right)
        // Solid colours, every pixel: compare a grid of them exactly (PNG is lossless).
        for y in stride(from: 0, to: 480, by: 37) { for x in stride(from: 0, to: 640, by: 41) { #expect(ImageChecks.near(a.pixel(x: x, y: y), 0xff0000, tolerance: 0), "(\(x),\(y))") } }
        for y in stride(from: 0, to: 240, by: 23) { for x in stride(from: 0, to: 320, by: 29) { #expect(ImageChecks.near(b.pixel(x: x, y: y), 0x00ff00, tolerance: 0), "(\(x),\(y))") } }
        #expect(left["displayFrameId"] != right["displayFrameId"])
        do { _ = try await ScreenTest.invoke(cap, .snapshot, #"{"screenIndex": 2}"#); Issue.record("expected an error") } catch {
            #expect(error.message.contains("2 output(s)"), "\(error.message)")
        }
        // A new colour is seen by the warm (cached) grabber.
        try sway.paint(output: 1, "#0000ff")  // returns once the output shows it
        let again = try ImageChecks.image(try await ScreenTest.invoke(cap, .snapshot, #"{"screenIndex": 0, "format": "png", "includePointer": false}"#))
        #expect(ImageChecks.near(again.pixel(x: 100, y: 100), 0x0000ff, tolerance: 0))
    }

    /// An output whose mode changes between two snapshots: the warm grabber notices (its check
    /// before reuse), and the next snapshot has the new size and another displayFrameId, so that
    /// coordinates mapped through the old one are refused.
    @Test func aModeChangeBetweenSnapshotsIsSeen() async throws {
        let sway = try Sway(outputs: [(640, 480, "#884422")])
        defer { sway.stop() }
        let cap = Self.capability(sway)
        let first = try await ScreenTest.invoke(cap, .snapshot, #"{"format": "jpeg", "includePointer": false}"#)
        #expect(first["width"] == 640 && first["height"] == 480)
        try sway.msg(["output", "HEADLESS-1", "mode", "800x600"])
        // swaymsg answers once sway has applied the mode and sent the outputs' events; the warm
        // grabber's check before reuse is a round trip, which reads them.
        let second = try await ScreenTest.invoke(cap, .snapshot, #"{"format": "jpeg", "includePointer": false}"#)
        #expect(second["width"] == 800, "\(second["width"] ?? nil)x\(second["height"] ?? nil)")
        #expect(second["height"] == 600 && second["displayFrameId"] != first["displayFrameId"], "\(second["displayFrameId"] ?? nil)")
        // The picture is not checked: swaybg repaints the background at the new size when it gets
        // to it, and on a busy machine the snapshot came first and showed sway's grey (the local
        // CI run did). The pixels of a capture are what the other tests here check.
        #expect(try ImageChecks.image(second).width == 800)
    }

    @Test func autoPicksTheCompositorAndJPEGIsClose() async throws {
        let sway = try Sway(outputs: [(800, 600, "#336699")])
        defer { sway.stop() }
        let cap = Self.capability(sway, backend: .auto)
        let jpeg = try ImageChecks.image(try await ScreenTest.invoke(cap, .snapshot, #"{"includePointer": false}"#))
        #expect(ImageChecks.near(jpeg.pixel(x: 400, y: 300), 0x336699, tolerance: 12))
    }

    @Test func recordingFollowsWhatTheCompositorShows() async throws {
        let sway = try Sway(outputs: [(320, 240, "#ff0000")])
        defer { sway.stop() }
        let changer = Thread {
            usleep(700_000); try? sway.paint(output: 1, "#00ff00")
            usleep(700_000); try? sway.paint(output: 1, "#0000ff")
        }
        changer.start()
        let payload = try await ScreenTest.invoke(Self.capability(sway), .record, #"{"durationMs": 2000, "fps": 10}"#, timeoutMs: 30_000)
        let file = try ScreenRecordTests.write(payload)
        let probe = try ImageChecks.ffprobe(file)
        let stream = probe["streams"]?.arrayValue?.first
        #expect(stream?["codec_name"] == "h264" && stream?["width"] == 320 && stream?["height"] == 240)
        #expect(ImageChecks.near(try ImageChecks.frame(of: file, at: 0).pixel(x: 60, y: 60), 0xff0000, tolerance: 40))
        #expect(ImageChecks.near(try ImageChecks.frame(of: file, at: -0.2).pixel(x: 60, y: 60), 0x0000ff, tolerance: 40))
    }

    /// A node started before the desktop (the package's user unit at boot): no WAYLAND_DISPLAY,
    /// nothing configured, and no compositor yet in its XDG_RUNTIME_DIR. Once the session's
    /// `wayland-0` is there, the running daemon captures it without a restart: the invoke that
    /// finds screen unavailable has it probed again.
    @Test func aCompositorThatStartsAfterTheNodeIsFoundWithoutWaylandDisplay() throws {
        let sway = try Sway(outputs: [(640, 360, "#ffffff")])
        defer { sway.stop() }
        let runtime = TestPaths.tempDir("xdg-run")
        defer { try? FileManager.default.removeItem(atPath: runtime) }
        chmod(runtime, 0o700)
        let node = NodeUnderTest(gatewaySection: "discovery: { lan: false }", extra: "capabilities: { screen: { enabled: true } }")
        defer { node.cleanup() }
        node.extraEnv = ["XDG_RUNTIME_DIR": runtime]
        try node.start()
        // The daemon answers on its control socket (status says "daemon": null until then).
        #expect(waitUntil(timeout: 30) { (try? node.status())?["daemon"]?["running"] == true }, "\(node.log.suffix(1500))")
        let params = #"{"format":"png","includePointer":false}"#
        let before = try node.cli(["invoke", "screen.snapshot", "--params", params])
        #expect(before.code == 1 && before.stdout.contains("SCREEN_UNAVAILABLE"), "\(before.stdout.prefix(300))\(before.stderr)")
        // The session starts: its compositor's socket appears where libwayland puts it.
        #expect(symlink(sway.socket, runtime + "/wayland-0") == 0)
        let after = try node.cli(["invoke", "screen.snapshot", "--params", params])
        #expect(after.code == 0, "\(after.stdout.prefix(300))\(after.stderr)\n\(node.log.suffix(1500))")
        let v = try #require(JSONValue.parse(after.stdout))
        #expect(v["width"] == 640 && v["height"] == 360)
        #expect(ImageChecks.near(try ImageChecks.image(v).pixel(x: 10, y: 10), 0xffffff, tolerance: 0))
        // The daemon's output reaches the test's copy of its log a moment later.
        #expect(waitUntil(timeout: 5) { node.log.contains("can serve now (probed again): screen") }, "before: \(before.stderr)\nafter: \(after.stderr)\n\(node.log.suffix(1500))")
        #expect(node.stop() == 0)
    }

    /// The same start-up order with a gateway: without any invoke, the periodic probe (1 s here,
    /// 30 s by default) finds the compositor and the node connects again declaring screen's
    /// commands, which the gateway then invokes.
    @Test func theGatewayIsToldOfTheScreenOnceTheCompositorIsThere() throws {
        let sway = try Sway(outputs: [(640, 360, "#ffffff")])
        defer { sway.stop() }
        let runtime = TestPaths.tempDir("xdg-run")
        defer { try? FileManager.default.removeItem(atPath: runtime) }
        chmod(runtime, 0o700)
        let gw = try TestGateway(stateFile: TestPaths.tempDir("gw") + "/gw.json", args: ["--auto-approve"]); defer { gw.stop() }
        let node = NodeUnderTest(gatewayURL: gw.url, extra: "capabilities: { screen: { enabled: true } }")
        defer { node.cleanup() }
        node.extraEnv = ["XDG_RUNTIME_DIR": runtime, "OPENCLAW_NODE_PROBE_SECONDS": "1"]
        try node.start()
        let first = try #require(gw.waitFor("connect"), "\(node.log.suffix(1500))")
        #expect(first["caps"]?.arrayValue?.contains("screen") == false, "\(first)")
        #expect(gw.waitFor("hello") != nil, "\(node.log.suffix(1500))")
        #expect(symlink(sway.socket, runtime + "/wayland-0") == 0)
        let again = gw.waitFor("connect", timeout: 15) { $0["caps"]?.arrayValue?.contains("screen") == true }
        #expect(again?["commands"]?.arrayValue?.contains("screen.snapshot") == true, "\(gw.all("connect"))\n\(node.log.suffix(1500))")
        #expect(gw.waitFor("hello", timeout: 15) != nil, "\(node.log.suffix(1500))")
        let shot = gw.invoke("screen.snapshot", paramsJSON: #"{"format":"png","includePointer":false}"#)
        #expect(shot?["ok"] == true, "\(String(describing: shot))")
        #expect(node.stop() == 0)
        #expect(gw.schemaErrors.isEmpty, "\(gw.schemaErrors)")
    }

    /// Through the real binary and its config: backend auto with waylandDisplay.
    @Test func binaryCapturesTheConfiguredCompositor() throws {
        let sway = try Sway(outputs: [(640, 360, "#ffffff")])
        defer { sway.stop() }
        let e = CLIEnv("capabilities: { screen: { enabled: true, waylandDisplay: '\(sway.socket)' } }")
        defer { e.cleanup() }
        let r = try e.run(["invoke", "screen.snapshot", "--local", "--params", #"{"format":"png","includePointer":false}"#, "--config", e.config])
        #expect(r.code == 0, "\(r.stdout.prefix(300))\(r.stderr)")
        let v = try #require(JSONValue.parse(r.stdout))
        #expect(v["width"] == 640 && v["height"] == 360)
        #expect(ImageChecks.near(try ImageChecks.image(v).pixel(x: 10, y: 10), 0xffffff, tolerance: 0))
        // doctor names what the compositor offers and what it enables.
        let doctor = try e.run(["doctor", "--config", e.config])
        #expect(doctor.stdout.contains("zwlr_screencopy_manager_v1 v3 (screen.snapshot and screen.record)"), "\(doctor.stdout)")
        #expect(doctor.stdout.contains("HEADLESS-1 640x360"), "\(doctor.stdout)")
        // caps names the backend, in words and in its JSON.
        let caps = try e.run(["caps", "--config", e.config])
        #expect(caps.stdout.contains("Served through:\n  screen: backend auto: captures through wlr-screencopy of the Wayland compositor at \(sway.socket)"), "\(caps.stdout)")
        let json = try #require(JSONValue.parse(try e.run(["caps", "--json", "--config", e.config]).stdout))
        #expect(json["backends"]?["screen"]?.stringValue?.contains("wlr-screencopy") == true, "\(json["backends"] ?? nil)")
    }
}

/// The protocol glue in Sources/CWaylandProtocols is wayland-scanner's output for the XML kept
/// beside it (scripts/wayland-protocols); this fails when someone edits one without the other.
@Suite struct WaylandProtocolsTests {
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/wayland-scanner"), "needs wayland-scanner (libwayland-bin)"))
    func generatedCodeMatchesTheProtocolXML() throws {
        let r = try runProcess("/bin/bash", [TestPaths.repoRoot + "/scripts/wayland-protocols", "--check"])
        #expect(r.code == 0, "\(r.stdout)\(r.stderr)")
    }
}

/// presence.mode "wayland": the compositor's idle protocol (org_kde_kwin_idle on sway 1.7) turns
/// the node background after presence.idleSeconds without input, and input (a virtual keyboard,
/// as a person typing) brings it back; foreground-only commands follow.
@Suite(.serialized, .enabled(if: Sway.available && FileManager.default.isExecutableFile(atPath: "/usr/bin/wtype"), "needs root, sway and wtype"))
struct WaylandPresenceTests {
    @Test func idleSeatIsBackgroundAndTypingBringsItBack() throws {
        let sway = try Sway(outputs: [(320, 240, "#808080")])
        defer { sway.stop() }
        let node = NodeUnderTest(gatewaySection: "discovery: { lan: false }",
                                 extra: "capabilities: { screen: { enabled: true, waylandDisplay: '\(sway.socket)' } }")
        defer { node.cleanup() }
        // NodeUnderTest's presence is manual; this test's config says wayland.
        let text = try String(contentsOfFile: node.configPath, encoding: .utf8)
            .replacingOccurrences(of: "presence: { mode: 'manual' }", with: "presence: { mode: 'wayland', display: '\(sway.socket)', idleSeconds: 2 }")
        try text.write(toFile: node.configPath, atomically: true, encoding: .utf8)
        try node.start()
        func presence() -> String? { (try? node.status())?["daemon"]?["presence"]?.stringValue }
        #expect(waitUntil(timeout: 15) { presence() == "background" }, "never idle: \(String(describing: try? node.status()))\n\(node.log.suffix(1500))")
        let refused = try node.cli(["invoke", "screen.snapshot"])
        #expect(refused.stdout.contains("NODE_BACKGROUND_UNAVAILABLE"), "\(refused.stdout)\(refused.stderr)")
        #expect(try node.status()?["daemon"]?["presenceReason"]?.stringValue?.contains("org_kde_kwin_idle") == true)
        // A person types: the seat is active again.
        let typed = try runProcess("/usr/bin/wtype", ["-s", "50", "hi"], env: ["WAYLAND_DISPLAY": sway.socket, "XDG_RUNTIME_DIR": sway.runtimeDir])
        #expect(typed.code == 0, "\(typed.stderr)")
        #expect(waitUntil(timeout: 3) { presence() == "foreground" }, "typing did not count as presence\n\(node.log.suffix(1500))")
        #expect(node.stop() == 0)
    }
}
