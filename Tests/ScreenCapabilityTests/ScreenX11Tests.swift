@testable import Config
import Foundation
@testable import HostPresence
@testable import Kit
import Media
@testable import NodeCLI
@testable import Registry
@testable import ScreenCapability
@testable import Store
@testable import Support
@testable import TestSupport
import Testing

/// screen.snapshot against a real Xvfb with known rectangles drawn by our own X client.
@Suite(.serialized) struct ScreenX11Tests {
    /// Paints four known rectangles on a 640x480 screen.
    static func paintQuadrants(_ p: XPainter, screen: Int32? = nil) {
        p.fill(screen: screen, x: 0, y: 0, width: 320, height: 240, rgb: 0xff0000)
        p.fill(screen: screen, x: 320, y: 0, width: 320, height: 240, rgb: 0x00ff00)
        p.fill(screen: screen, x: 0, y: 240, width: 320, height: 240, rgb: 0x0000ff)
        p.fill(screen: screen, x: 320, y: 240, width: 320, height: 240, rgb: 0xffff00)
        p.fill(screen: screen, x: 300, y: 220, width: 40, height: 40, rgb: 0x000000)
    }

    static func checkQuadrants(_ img: DecodedImage, tolerance: Int = 16) {
        let sx = Double(img.width) / 640, sy = Double(img.height) / 480
        for (x, y, rgb) in [(100, 100, UInt32(0xff0000)), (540, 100, 0x00ff00), (100, 380, 0x0000ff), (540, 380, 0xffff00),
                            (320, 240, 0x000000)] {
            let p = img.pixel(x: Int(Double(x) * sx), y: Int(Double(y) * sy))
            #expect(ImageChecks.near(p, rgb, tolerance: tolerance), "pixel (\(x),\(y)) is \(ImageChecks.hex(p)), expected \(String(rgb, radix: 16))")
        }
    }

    @Test func jpegSnapshotThroughSharedMemoryHasTheDrawnPixels() async throws {
        let x = try Xvfb(screens: ["640x480x24"])
        defer { x.stop() }
        let painter = try XPainter(x.display)
        Self.paintQuadrants(painter)
        let cap = ScreenTest.capability(display: x.display)
        #expect(await cap.availability() == .available)

        let payload = try await ScreenTest.invoke(cap, .snapshot, #"{"includePointer": false}"#)
        #expect(payload["format"] == "jpeg")
        #expect(payload["width"] == 640)
        #expect(payload["height"] == 480)
        #expect(payload["screenIndex"] == 0)
        let now = Date().timeIntervalSince1970 * 1000
        #expect(abs((payload["capturedAtMs"]?.doubleValue ?? 0) - now) < 10_000)
        let img = try ImageChecks.image(payload)
        #expect(img.width == 640 && img.height == 480)
        Self.checkQuadrants(img)

        // The grabber really used MIT-SHM here.
        let grabber = try cap.sources.open(screenIndex: 0)
        #expect(grabber.method == "XShm")
    }

    @Test func pngSnapshotIsExact() async throws {
        let x = try Xvfb(screens: ["640x480x24"])
        defer { x.stop() }
        let painter = try XPainter(x.display)
        Self.paintQuadrants(painter)
        let payload = try await ScreenTest.invoke(ScreenTest.capability(display: x.display), .snapshot,
                                                  #"{"format": "png", "maxWidth": 640, "includePointer": false}"#)
        #expect(payload["format"] == "png")
        let img = try ImageChecks.image(payload)
        Self.checkQuadrants(img, tolerance: 0)
        // Edges are exact too: the last red column and the first green one.
        #expect(ImageChecks.near(img.pixel(x: 319, y: 10), 0xff0000, tolerance: 0))
        #expect(ImageChecks.near(img.pixel(x: 320, y: 10), 0x00ff00, tolerance: 0))
    }

    @Test func xGetImageFallbackGivesTheSamePicture() async throws {
        let x = try Xvfb(screens: ["640x480x24"])
        defer { x.stop() }
        let painter = try XPainter(x.display)
        Self.paintQuadrants(painter)
        let cap = ScreenTest.capability(display: x.display, shm: false)
        let grabber = try cap.sources.open(screenIndex: 0)
        #expect(grabber.method == "XGetImage")
        let payload = try await ScreenTest.invoke(cap, .snapshot, #"{"format": "png", "maxWidth": 640, "includePointer": false}"#)
        Self.checkQuadrants(try ImageChecks.image(payload), tolerance: 0)
    }

    @Test func binaryUsesDISPLAYAndHonoursTheNoShmSwitch() throws {
        let x = try Xvfb(screens: ["640x480x24"])
        defer { x.stop() }
        let painter = try XPainter(x.display)
        Self.paintQuadrants(painter)
        let dir = TestPaths.tempDir("scr")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let config = ScreenTest.config(in: dir, screen: "backend: 'auto'")
        for (noShm, method) in [("1", "XGetImage"), ("0", "XShm")] {
            let r = try runProcess(TestPaths.nodeBinary, ["invoke", "screen.snapshot", "--local", "--compact", "--config", config,
                                                         "--params", #"{"includePointer": false}"#],
                                   env: ["HOME": dir, "PATH": "/usr/bin:/bin", "DISPLAY": x.display,
                                         "OPENCLAW_NODE_SCREEN_NO_SHM": noShm, "OPENCLAW_NODE_LOG": "debug"])
            #expect(r.code == 0, "\(r.stderr)")
            #expect(r.stderr.contains("via \(method)"), "\(r.stderr)")
            guard let payload = JSONValue.parse(r.stdout) else { Issue.record("no JSON: \(r.stdout)"); continue }
            Self.checkQuadrants(try ImageChecks.image(payload))
        }
    }

    @Test func noShmEnvironmentSwitchForcesXGetImage() {
        let config = NodeConfig(environment: [:])
        #expect(ScreenSettings(config: config, environment: ["OPENCLAW_NODE_SCREEN_NO_SHM": "1"]).useSharedMemory == false)
        #expect(ScreenSettings(config: config, environment: [:]).useSharedMemory == true)
        #expect(ScreenSettings(config: config, environment: ["DISPLAY": ":7"]).display == ":7")
    }

    @Test func defaultMaxWidthScalesDownKeepingAspect() async throws {
        let x = try Xvfb(screens: ["1920x1080x24"])
        defer { x.stop() }
        let painter = try XPainter(x.display)
        painter.fill(x: 0, y: 0, width: 960, height: 1080, rgb: 0x2040c0)
        painter.fill(x: 960, y: 0, width: 960, height: 1080, rgb: 0xe0e0e0)
        let cap = ScreenTest.capability(display: x.display)
        let jpeg = try await ScreenTest.invoke(cap, .snapshot)
        #expect(jpeg["width"] == 1600)
        #expect(jpeg["height"] == 900)
        let png = try await ScreenTest.invoke(cap, .snapshot, #"{"format": "png"}"#)
        #expect(png["width"] == 900)
        #expect(png["height"] == 506)
        let img = try ImageChecks.image(png)
        #expect(ImageChecks.near(img.pixel(x: 200, y: 250), 0x2040c0, tolerance: 2))
        #expect(ImageChecks.near(img.pixel(x: 700, y: 250), 0xe0e0e0, tolerance: 2))
    }

    @Test func separateXScreensAreScreenIndexes() async throws {
        let x = try Xvfb(screens: ["640x480x24", "320x200x24"])
        defer { x.stop() }
        let painter = try XPainter(x.display)
        painter.fill(screen: 0, x: 0, y: 0, width: 640, height: 480, rgb: 0xff8000)
        painter.fill(screen: 1, x: 0, y: 0, width: 320, height: 200, rgb: 0x0080ff)
        let cap = ScreenTest.capability(display: x.display)
        let first = try await ScreenTest.invoke(cap, .snapshot, #"{"screenIndex": 0, "format": "png", "includePointer": false}"#)
        let second = try await ScreenTest.invoke(cap, .snapshot, #"{"screenIndex": 1, "format": "png", "includePointer": false}"#)
        #expect(first["width"] == 640 && first["height"] == 480)
        #expect(second["width"] == 320 && second["height"] == 200)
        #expect(second["screenIndex"] == 1)
        #expect(ImageChecks.near(try ImageChecks.image(first).pixel(x: 10, y: 10), 0xff8000, tolerance: 0))
        #expect(ImageChecks.near(try ImageChecks.image(second).pixel(x: 10, y: 10), 0x0080ff, tolerance: 0))

        do { _ = try await ScreenTest.invoke(cap, .snapshot, #"{"screenIndex": 2}"#); Issue.record("expected an error") } catch {
            #expect(error.code == "INVALID_REQUEST")
            #expect(error.message.contains("has 2 screens"))
        }
    }

    @Test func randrMonitorsOfTheDefaultScreenAreScreenIndexes() async throws {
        let x = try Xvfb(screens: ["640x480x24"])
        defer { x.stop() }
        let painter = try XPainter(x.display)
        painter.fill(x: 0, y: 0, width: 400, height: 480, rgb: 0xc00000)
        painter.fill(x: 400, y: 0, width: 240, height: 480, rgb: 0x00c000)
        painter.fill(x: 400, y: 0, width: 10, height: 10, rgb: 0xffffff)
        painter.setMonitor("LEFT", x: 0, y: 0, width: 400, height: 480)
        painter.setMonitor("RIGHT", x: 400, y: 0, width: 240, height: 300)
        let cap = ScreenTest.capability(display: x.display)

        // Xvfb lists the user monitors first, then the one of its output (like `xrandr --listmonitors`).
        let grabber0 = try cap.sources.open(screenIndex: 0) as! X11Grabber
        let grabber1 = try cap.sources.open(screenIndex: 1) as! X11Grabber
        #expect(grabber0.target.label == "monitor LEFT")
        #expect(grabber1.target.label == "monitor RIGHT")

        let left = try await ScreenTest.invoke(cap, .snapshot, #"{"screenIndex": 0, "format": "png", "includePointer": false}"#)
        let right = try await ScreenTest.invoke(cap, .snapshot, #"{"screenIndex": 1, "format": "png", "includePointer": false}"#)
        #expect(left["width"] == 400 && left["height"] == 480)
        #expect(right["width"] == 240 && right["height"] == 300)
        let l = try ImageChecks.image(left), r = try ImageChecks.image(right)
        #expect(ImageChecks.near(l.pixel(x: 399, y: 400), 0xc00000, tolerance: 0))
        // The right monitor starts at x=400: its origin pixel is the white marker.
        #expect(ImageChecks.near(r.pixel(x: 0, y: 0), 0xffffff, tolerance: 0))
        #expect(ImageChecks.near(r.pixel(x: 100, y: 100), 0x00c000, tolerance: 0))

        // Both capture methods crop the monitor the same way.
        let viaGetImage = try await ScreenTest.invoke(ScreenTest.capability(display: x.display, shm: false), .snapshot,
                                                      #"{"screenIndex": 1, "format": "png", "includePointer": false}"#)
        #expect(viaGetImage["base64"] == right["base64"])
    }

    @Test func includePointerDrawsTheCursorWhereThePointerIs() async throws {
        let x = try Xvfb(screens: ["640x480x24"])
        defer { x.stop() }
        let painter = try XPainter(x.display)
        painter.fill(x: 0, y: 0, width: 640, height: 480, rgb: 0x808080)
        painter.warpPointer(x: 200, y: 150)
        let cap = ScreenTest.capability(display: x.display)
        let plain = try ImageChecks.image(try await ScreenTest.invoke(cap, .snapshot, #"{"format": "png", "includePointer": false}"#))
        let withPointer = try ImageChecks.image(try await ScreenTest.invoke(cap, .snapshot, #"{"format": "png", "includePointer": true}"#))
        var changed: [(Int, Int)] = []
        for y in 0..<480 { for x in 0..<640 where plain.pixel(x: x, y: y) != withPointer.pixel(x: x, y: y) { changed.append((x, y)) } }
        #expect(plain.rgb.allSatisfy { $0 == 0x80 }, "without the pointer the screen is the plain fill")
        #expect(!changed.isEmpty, "the cursor was drawn")
        #expect(changed.allSatisfy { abs($0.0 - 200) < 40 && abs($0.1 - 150) < 40 }, "only around the pointer")
    }

    @Test func tinyPayloadShrinksTheImageOrFailsWithPayloadTooLarge() async throws {
        let x = try Xvfb(screens: ["640x480x24"])
        defer { x.stop() }
        let painter = try XPainter(x.display)
        // Noise: many small rectangles in pseudo-random colours make a big JPEG.
        var seed: UInt32 = 12345
        for i in 0..<4000 {
            seed = seed &* 1_103_515_245 &+ 12345
            painter.fill(x: (i * 37) % 632, y: (i * 53) % 472, width: 8, height: 8, rgb: seed & 0xffffff)
        }
        let cap = ScreenTest.capability(display: x.display)
        let full = try await ScreenTest.invoke(cap, .snapshot, #"{"quality": 0.95, "includePointer": false}"#)
        let fullSize = full["base64"]?.stringValue?.count ?? 0
        let limit = PayloadBudget.envelopeReserve + fullSize / 4
        let small = try await ScreenTest.invoke(cap, .snapshot, #"{"quality": 0.95, "includePointer": false}"#, maxPayload: limit)
        #expect((small["base64"]?.stringValue?.count ?? .max) <= limit - PayloadBudget.envelopeReserve)
        _ = try ImageChecks.image(small)

        do {
            _ = try await ScreenTest.invoke(cap, .snapshot, #"{"format": "png"}"#, maxPayload: PayloadBudget.envelopeReserve + 50)
            Issue.record("expected PAYLOAD_TOO_LARGE")
        } catch {
            #expect(error.code == "PAYLOAD_TOO_LARGE")
            #expect(error.message.hasPrefix("PAYLOAD_TOO_LARGE: "))
        }
    }

    @Test func warmGrabberIsReusedAndSeesNewPixels() async throws {
        let x = try Xvfb(screens: ["320x240x24"])
        defer { x.stop() }
        let painter = try XPainter(x.display)
        painter.fill(x: 0, y: 0, width: 320, height: 240, rgb: 0xff0000)
        let cap = ScreenTest.capability(display: x.display)
        let params = #"{"format": "png", "includePointer": false}"#
        #expect(ImageChecks.near(try ImageChecks.image(try await ScreenTest.invoke(cap, .snapshot, params)).pixel(x: 5, y: 5), 0xff0000, tolerance: 0))
        let warm = try #require(cap.cache.idleGrabberID)
        painter.fill(x: 0, y: 0, width: 320, height: 240, rgb: 0x0000ff)
        #expect(ImageChecks.near(try ImageChecks.image(try await ScreenTest.invoke(cap, .snapshot, params)).pixel(x: 5, y: 5), 0x0000ff, tolerance: 0))
        #expect(cap.cache.idleGrabberID == warm, "the second snapshot reused the connection and segment")

        // A different screenIndex (here: a new RandR monitor layout) is re-validated, not reused blindly.
        painter.setMonitor("A", x: 0, y: 0, width: 160, height: 240)
        painter.setMonitor("B", x: 160, y: 0, width: 160, height: 240)
        let narrow = try await ScreenTest.invoke(cap, .snapshot, params)
        #expect(narrow["width"] == 160)
        #expect(cap.cache.idleGrabberID != warm)
        await cap.shutdown()
        #expect(cap.cache.idleGrabberID == nil)
    }

    @Test func xServerGoingAwayIsAnErrorNotACrash() async throws {
        let x = try Xvfb(screens: ["320x240x24"])
        let cap = ScreenTest.capability(display: x.display)
        _ = try await ScreenTest.invoke(cap, .snapshot)
        let held = try cap.sources.open(screenIndex: 0)
        x.stop()
        // Xlib's default handlers would exit this process here.
        do {
            _ = try held.grab(includePointer: true) { (_: PixelView) throws(NodeError) -> Int in 0 }
            Issue.record("capture from a dead server succeeded")
        } catch {
            #expect(error.code == "SCREEN_UNAVAILABLE")
        }
        do { _ = try await ScreenTest.invoke(cap, .snapshot); Issue.record("expected an error") } catch {
            #expect(error.code == "SCREEN_UNAVAILABLE")
        }
        #expect(held.isStillValid(screenIndex: 0) == false)
    }

    @Test func unreachableDisplayIsScreenUnavailableWithAHint() async {
        let cap = ScreenCapability(settings: ScreenSettings(backend: .x11, display: ":4321"))
        guard case .unavailable(let why) = await cap.availability() else { Issue.record("should be unavailable"); return }
        #expect(why.contains("cannot connect to X display :4321"))
        do { _ = try await ScreenTest.invoke(cap, .snapshot); Issue.record("expected an error") } catch {
            #expect(error.code == "SCREEN_UNAVAILABLE")
            #expect(error.message.contains("capabilities.screen.display"))
        }
    }

    @Test func autoWithNothingToCaptureExplainsWaylandAndFramebuffer() {
        let sources = ScreenSources(settings: ScreenSettings(backend: .auto, display: nil, framebuffer: "/nonexistent/fb9",
                                                             wayland: "XDG_SESSION_TYPE=wayland"))
        guard case .unavailable(let why) = sources.probe() else { Issue.record("should be unavailable"); return }
        #expect(why.hasPrefix("SCREEN_UNAVAILABLE: nothing to capture"))
        #expect(why.contains("DISPLAY is unset"))
        #expect(why.contains("no framebuffer at /nonexistent/fb9"))
        #expect(why.contains("Wayland session (XDG_SESSION_TYPE=wayland)") && why.contains("capabilities.screen.waylandDisplay"), "\(why)")
    }
}
