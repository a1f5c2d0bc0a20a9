@testable import Config
import DesktopSession
import Foundation
@testable import Kit
import Media
@testable import ScreenCapability
@testable import Support
@testable import TestSupport
import Testing
@testable import WaylandSupport

/// screen.snapshot and screen.record on a real KDE Plasma compositor (kwin_wayland 5.27, virtual
/// backend) through KWin's ScreenShot2, which serves only programs a desktop entry grants it:
/// the node's binary (as the package's entry does), and nobody else.
@Suite(.serialized, .enabled(if: KWinSession.available, "needs root, kwin-wayland and GTK 4 (scripts/setup installs them)"))
struct ScreenKdeTests {
    static func node(_ kwin: KWinSession, _ args: [String], config: String) throws -> ProcessResult {
        try runProcess(TestPaths.nodeBinary, args + ["--config", config], env: kwin.environment)
    }

    static func config(_ kwin: KWinSession) throws -> String {
        let path = kwin.dir + "/node.json5"
        try "{ node: { stateDir: '\(kwin.dir)/state' }, presence: { mode: 'always' }, capabilities: { screen: { enabled: true } } }"
            .write(toFile: path, atomically: false, encoding: .utf8)
        return path
    }

    @Test func theGrantedNodeCapturesExactPixelsAndRecords() throws {
        let kwin = try KWinSession(width: 1280, height: 720, rgb: "#00ff00")
        defer { kwin.stop() }
        let config = try Self.config(kwin)
        let r = try Self.node(kwin, ["invoke", "screen.snapshot", "--local", "--compact", "--params",
                                     #"{"format": "png", "maxWidth": 1280, "includePointer": false}"#], config: config)
        let shot = try #require(JSONValue.parse(r.stdout), "\(r.stdout.prefix(300))\(r.stderr.suffix(1500))")
        #expect(shot["width"] == 1280 && shot["height"] == 720, "\(r.stdout.prefix(300))")
        let image = try ImageChecks.image(shot)
        for y in stride(from: 0, to: 720, by: 47) { for x in stride(from: 0, to: 1280, by: 53) { #expect(ImageChecks.near(image.pixel(x: x, y: y), 0x00ff00, tolerance: 0), "(\(x),\(y))") } }

        // A recording polls the screenshots: the asked duration, several frames.
        let rec = try Self.node(kwin, ["invoke", "screen.record", "--local", "--compact", "--params", #"{"durationMs": 2000, "fps": 10}"#], config: config)
        let payload = try #require(JSONValue.parse(rec.stdout), "\(rec.stdout.prefix(300))\(rec.stderr.suffix(1500))")
        let file = try ScreenRecordTests.write(payload)
        defer { try? FileManager.default.removeItem(atPath: (file as NSString).deletingLastPathComponent) }
        let probe = try ImageChecks.ffprobe(file)
        let stream = probe["streams"]?.arrayValue?.first
        #expect(stream?["width"] == 1280 && stream?["height"] == 720, "\(probe)")
        let frames = Int(stream?["nb_read_frames"]?.stringValue ?? "") ?? 0
        // Each frame is a whole screenshot; a debug build on a busy machine gets a few a second
        // (the pacer skips slots rather than stretch the clip).
        #expect((2...21).contains(frames), "2 s at 10 fps: \(frames) frames")
        let duration = Double(probe["format"]?["duration"]?.stringValue ?? "") ?? 0
        #expect(abs(duration - 2.0) < 0.25, "duration \(duration)")
        // Away from the middle, where KWin puts the pointer (a recording shows it).
        #expect(ImageChecks.near(try ImageChecks.frame(of: file, at: 1.5).pixel(x: 100, y: 100), 0x00ff00, tolerance: 16))

        let doctor = try Self.node(kwin, ["doctor"], config: config)
        #expect(doctor.stdout.contains("[ok  ] screen: backend auto: captures through KWin's ScreenShot2 (Virtual-0 1280x720); not used: " +
                                       "the Wayland compositor at wayland-0 offers no wlr-screencopy"), "\(doctor.stdout)")
        // caps names the backend too (without asking KWin for a picture).
        let caps = try Self.node(kwin, ["caps"], config: config)
        #expect(caps.stdout.contains("Served through:\n  screen: backend auto: captures through KWin's ScreenShot2 (Virtual-0 1280x720)"), "\(caps.stdout)")

        // The test process itself has no grant: KWin refuses it.
        let bus = try SessionBus(address: kwin.sessionBus)
        do {
            _ = try KWinScreenShot.capture(bus, output: "Virtual-0", includeCursor: false)
            Issue.record("KWin served a program it has no grant for")
        } catch {
            #expect(KWinScreenShot.isNotAuthorized(error), "\(error)")
        }
    }

    /// presence.mode wayland on KWin: its idle notification, as on wlroots (nobody types here, so
    /// a second of idleness is background).
    @Test func kwinsIdleNotificationDrivesWaylandPresence() async throws {
        let kwin = try KWinSession(width: 640, height: 480, rgb: "#000000")
        defer { kwin.stop() }
        var config = NodeConfig.Presence()
        config.mode = .wayland
        config.display = kwin.runtimeDir + "/" + kwin.socket
        config.idleSeconds = 1
        let source = WaylandPresenceSource(config: config)
        let first = await source.sample()  // registers the source's idle timeout with KWin
        #expect(first.presence == .foreground, "\(first.reason)")
        // A second timeout of the same length, registered after the source's: once KWin says it
        // idled, the source's has too. Waited for on the compositor's socket, not the clock.
        let connection = try WaylandConnection(socket: config.display!)
        let watch = try #require(IdleWatch(connection: connection, timeoutMs: 1000), "KWin offers no idle notification")
        try connection.wait(until: { watch.idle }, timeout: .seconds(10), what: "KWin's idle notification")
        let sample = await source.sample()
        #expect(sample.presence == .background && sample.reason.contains("no input on the Wayland seat"), "\(sample.reason)")
    }

    @Test func withoutTheGrantDoctorAndTheCommandSayWhatToDo() throws {
        let kwin = try KWinSession(width: 800, height: 600, rgb: "#0000ff", grant: false)
        defer { kwin.stop() }
        let config = try Self.config(kwin)
        let r = try Self.node(kwin, ["invoke", "screen.snapshot", "--local", "--compact"], config: config)
        #expect(r.code != 0 && r.stdout.contains("KWin refused the screenshot") && r.stdout.contains("ai.openclaw.node.desktop"), "\(r.stdout)\(r.stderr.suffix(800))")
        let doctor = try Self.node(kwin, ["doctor"], config: config)
        #expect(doctor.stdout.contains("[FAIL] screen: KWin refused the screenshot"), "\(doctor.stdout)")
    }
}
