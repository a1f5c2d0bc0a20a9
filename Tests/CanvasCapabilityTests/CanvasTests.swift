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

/// canvas.* through a real daemon, a real headless Chromium and the loopback test gateway.
@Suite(.serialized, .enabled(if: CanvasNode.browserInstalled, "needs chromium-headless-shell (scripts/setup installs it)"))
struct CanvasTests {
    /// The OpenClaw docs' example, as written: scaffold, draw a line through window.__openclaw.ctx,
    /// then a 900-px JPEG snapshot that shows it.
    @Test func docsExampleDrawsOnTheScaffold() throws {
        let c = try CanvasNode(); defer { c.stop() }
        #expect(c.invoke("canvas.navigate", #"{"url":""}"#).ok, "\(c.node.log)")
        let js = ##"(() => { const {ctx} = window.__openclaw; ctx.clearRect(0,0,innerWidth,innerHeight); ctx.lineWidth=6; ctx.strokeStyle="#ff4d4d"; ctx.beginPath(); ctx.moveTo(40,40); ctx.lineTo(900,520); ctx.stroke(); return "ok"; })()"##
        #expect(c.eval(js) == "ok", "\(c.node.log)")
        let img = try c.snapshot(#"{"maxWidth":900,"format":"jpeg"}"#)
        #expect(img.width == 900, "width \(img.width)")
        // The middle of the line (470,280 in page pixels) is red; a point away from it is the dark background.
        let s = Double(img.width) / 1280
        let onLine = (-2...2).flatMap { dy in (-2...2).map { dx in img.pixel(x: Int(470 * s) + dx, y: Int(280 * s) + dy) } }
        #expect(onLine.contains { $0.r > 200 && $0.g < 120 && $0.b < 120 }, "no red near the line: \(onLine.prefix(3))")
        let off = img.pixel(x: Int(1100 * s), y: Int(150 * s))
        #expect(off.r < 40 && off.g < 40 && off.b < 50, "background \(off)")
        // window.__openclaw has the scaffold's contract.
        #expect(c.eval("Object.keys(window.__openclaw).sort().join(',')") == "canvas,ctx,renderHome,setDebugStatusEnabled,setStatus")
        #expect(c.eval("window.__openclaw.canvas.width === Math.floor(innerWidth * devicePixelRatio)") == "true")
        #expect(c.gw.schemaErrors.isEmpty)
    }

    @Test func evalValuesExceptionsAndTimeouts() throws {
        let c = try CanvasNode(); defer { c.stop() }
        // Before any navigate the scaffold is there.
        #expect(c.eval("typeof window.__openclaw.ctx") == "object")
        #expect(c.eval("1 + 1") == "2")
        #expect(c.eval("'text'") == "text")
        #expect(c.eval("({a: 1, b: [true]})") == #"{"a":1,"b":[true]}"#)
        #expect(c.eval("undefined") == "")
        #expect(c.eval("0.5") == "0.5")
        #expect(c.eval("Promise.resolve(7)") == "7")
        #expect(c.invoke("canvas.eval", #"{"script":"'windows name'"}"#).payload?["result"] == "windows name")
        let thrown = c.invoke("canvas.eval", #"{"javaScript":"throw new Error('boom')"}"#)
        #expect(!thrown.ok)
        #expect(thrown.error?["code"] == "CANVAS_EVAL_FAILED")
        #expect(thrown.error?["message"]?.stringValue?.contains("boom") == true, "\(String(describing: thrown.error))")
        let started = Date()
        let loop = c.invoke("canvas.eval", #"{"javaScript":"while (true) {}"}"#, timeoutMs: 3000)
        #expect(!loop.ok)
        #expect(Date().timeIntervalSince(started) < 8)
        // The page is usable again afterwards.
        #expect(c.eval("2 * 21") == "42", "\(c.node.log.suffix(2000))")
        let missing = c.invoke("canvas.eval", "{}")
        #expect(missing.error?["code"] == "INVALID_REQUEST")
    }

    @Test func snapshotPixelsMatchAPageWithKnownColours() throws {
        let host = try CanvasHostServer(); defer { host.stop() }
        let c = try CanvasNode(); defer { c.stop() }
        #expect(c.invoke("canvas.navigate", #"{"url":"\#(host.base)/__openclaw__/canvas/colors.html"}"#).ok, "\(c.node.log)")
        for (params, width) in [(#"{"format":"png","maxWidth":640}"#, 640), (#"{"format":"jpeg","quality":0.9}"#, 1280)] {
            let img = try c.snapshot(params)
            #expect(img.width == width)
            let want: [(Double, Double, UInt32)] = [(0.25, 0.25, 0xff0000), (0.75, 0.25, 0x00ff00), (0.25, 0.75, 0x0000ff), (0.75, 0.75, 0xffffff)]
            for (fx, fy, rgb) in want {
                let p = img.pixel(x: Int(Double(img.width) * fx), y: Int(Double(img.height) * fy))
                #expect(ImageChecks.near(p, rgb, tolerance: 12), "\(params) at \(fx),\(fy): \(ImageChecks.hex(p))")
            }
        }
    }

    @Test func relativeURLsResolveAgainstTheAdvertisedCanvasHost() throws {
        let host = try CanvasHostServer(); defer { host.stop() }
        let c = try CanvasNode(canvasHost: host.base + "/__openclaw__/cap/TOKEN123"); defer { c.stop() }
        _ = host.requests()
        #expect(c.invoke("canvas.navigate", #"{"url":"colors.html"}"#).ok, "\(c.node.log)")
        #expect(c.eval("window.pageName") == "colors")
        #expect(c.invoke("canvas.navigate", #"{"url":"/__openclaw__/canvas/colors.html?x=1"}"#).ok)
        let seen = host.requests()
        #expect(seen.contains("/__openclaw__/cap/TOKEN123/__openclaw__/canvas/colors.html"), "\(seen)")
        #expect(seen.contains("/__openclaw__/cap/TOKEN123/__openclaw__/canvas/colors.html?x=1"), "\(seen)")
        // "" goes back to the built-in scaffold.
        #expect(c.invoke("canvas.navigate", #"{"url":""}"#).ok)
        #expect(c.eval("typeof window.__openclaw") == "object")
        let bad = c.invoke("canvas.navigate", #"{"url":"javascript:alert(1)"}"#)
        #expect(bad.error?["code"] == "INVALID_REQUEST")
    }

    @Test func aPageThatNeverLoadsIsAnErrorNotAHang() throws {
        let host = try CanvasHostServer(); defer { host.stop() }
        let c = try CanvasNode(); defer { c.stop() }
        let started = Date()
        let r = c.invoke("canvas.navigate", #"{"url":"\#(host.base)/hang"}"#, timeoutMs: 4000)
        #expect(!r.ok)
        #expect(r.error?["code"] == "CANVAS_UNAVAILABLE" || r.error?["code"] == "TIMEOUT", "\(String(describing: r.error))")
        #expect(Date().timeIntervalSince(started) < 10)
        let refused = c.invoke("canvas.navigate", #"{"url":"http://127.0.0.1:\#(try freeLoopbackPort())/"}"#)
        #expect(refused.error?["message"]?.stringValue?.contains("ERR_CONNECTION_REFUSED") == true, "\(String(describing: refused.error))")
        // Still usable.
        #expect(c.invoke("canvas.navigate", #"{"url":""}"#).ok)
    }

    @Test func aKilledBrowserIsRestartedOnTheNextCommand() throws {
        let c = try CanvasNode(); defer { c.stop() }
        #expect(c.eval("1") == "1")
        let before = c.browserPids
        #expect(!before.isEmpty)
        for pid in before { kill(pid, SIGKILL) }
        #expect(waitUntil(timeout: 5) { c.browserPids.isEmpty })
        #expect(c.eval("typeof window.__openclaw") == "object", "\(c.node.log.suffix(2000))")
        #expect(c.node.log.contains("starting a new one") && c.node.log.contains("reloading the page"), "\(c.node.log.suffix(2000))")
        // Stopping the daemon stops the browser (by PID, process group included).
        #expect(!c.browserPids.isEmpty)
        #expect(c.node.stop() == 0)
        #expect(waitUntil(timeout: 5) { c.browserPids.isEmpty }, "browser left running: \(c.browserPids)")
    }

    @Test func profileIsPrivateAndNoDebuggingPortIsOpen() throws {
        let c = try CanvasNode(); defer { c.stop() }
        #expect(c.eval("1") == "1")
        var st = stat()
        #expect(stat(c.node.dir + "/state/canvas/browser", &st) == 0)
        #expect(st.st_mode & 0o777 == 0o700)
        // The bundle's own state directory above it is private too.
        #expect(stat(c.node.dir + "/state/canvas", &st) == 0 && st.st_mode & 0o777 == 0o700)
        for pid in c.browserPids {
            let cmd = (try? String(contentsOfFile: "/proc/\(pid)/cmdline", encoding: .utf8)) ?? ""
            #expect(!cmd.contains("--remote-debugging-port"), "\(cmd)")
        }
        // Foreground-only, like the other apps' canvas.
        #expect(try c.node.cli(["presence", "background"]).code == 0)
        #expect(c.invoke("canvas.eval", #"{"javaScript":"1"}"#).error?["code"] == "NODE_BACKGROUND_UNAVAILABLE")
    }
}

/// What a user sees when the canvas cannot run: a reason, not a crash.
@Suite struct CanvasAvailabilityTests {
    @Test func missingBrowserIsNotAdvertisedWithTheInstallHint() throws {
        let e = CLIEnv("capabilities: { canvas: { browser: '/nonexistent/chromium' } }")
        defer { e.cleanup() }
        let caps = try e.run(["caps", "--config", e.config])
        #expect(caps.stdout.contains("- canvas.eval") && !caps.stdout.contains("+ canvas.eval"), "\(caps.stdout)")
        #expect((caps.stdout + caps.stderr).contains("\"/nonexistent/chromium\" is not an executable"), "\(caps.stdout)")
    }

    @Test(.enabled(if: CanvasNode.browserInstalled)) func disabledCanvasIsCanvasDisabled() throws {
        let e = CLIEnv("capabilities: { canvas: { enabled: false } }")
        defer { e.cleanup() }
        let r = try e.run(["invoke", "canvas.eval", "--local", "--params", #"{"javaScript":"1"}"#, "--config", e.config])
        #expect(r.code != 0)
        #expect(r.stdout.contains("CANVAS_DISABLED"), "\(r.stdout) \(r.stderr)")
    }
}
