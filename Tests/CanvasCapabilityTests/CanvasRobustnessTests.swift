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

/// The canvas under concurrency, crashes and slow pages (regressions from the code review).
@Suite(.serialized, .enabled(if: CanvasNode.browserInstalled, "needs chromium-headless-shell (scripts/setup installs it)"))
struct CanvasRobustnessTests {
    /// Main browser processes of the node (helpers carry --type=…).
    static func mainBrowsers(_ c: CanvasNode) -> [Int32] {
        c.browserPids.filter { pid in
            let cmd = (try? String(contentsOfFile: "/proc/\(pid)/cmdline", encoding: .utf8)) ?? ""
            return !cmd.contains("--type=")
        }
    }

    static func concurrently(_ n: Int, _ body: @escaping @Sendable (Int) -> Bool) -> Int {
        let ok = Counter()
        DispatchQueue.concurrentPerform(iterations: n) { i in if body(i) { ok.add() } }
        return ok.value
    }

    final class Counter: @unchecked Sendable {
        private let lock = NSLock()
        private var n = 0
        func add() { lock.withLock { n += 1 } }
        var value: Int { lock.withLock { n } }
    }

    @Test func concurrentFirstUseStartsOneBrowserAndBigScriptsDoNotInterleave() throws {
        let c = try CanvasNode(); defer { c.stop() }
        #expect(Self.concurrently(4) { _ in c.eval("1 + 1") == "2" } == 4, "\(c.node.log.suffix(2000))")
        #expect(Self.mainBrowsers(c).count == 1, "\(Self.mainBrowsers(c))")
        // 300 KB scripts at once: each message is far over the pipe's atomic write size.
        let big = String(repeating: "x", count: 300_000)
        let done = Self.concurrently(6) { i in c.eval("'\(big)'.length + \(i)") == String(300_000 + i) }
        #expect(done == 6, "\(c.node.log.suffix(2000))")
    }

    @Test func aCrashedRendererIsReplaced() throws {
        let host = try CanvasHostServer(); defer { host.stop() }
        let c = try CanvasNode(); defer { c.stop() }
        #expect(c.invoke("canvas.navigate", #"{"url":"\#(host.base)/__openclaw__/canvas/colors.html"}"#).ok)
        // Renderers run in the browser's process group (the node starts it as a group leader).
        let main = try #require(Self.mainBrowsers(c).first)
        let group = (try? runProcess("/usr/bin/pgrep", ["-g", String(main)]))?.stdout.split(separator: "\n").compactMap { Int32($0) } ?? []
        let renderers = group.filter { pid in
            ((try? String(contentsOfFile: "/proc/\(pid)/cmdline", encoding: .utf8)) ?? "").contains("--type=renderer")
        }
        #expect(!renderers.isEmpty)
        for pid in renderers { kill(pid, SIGKILL) }
        #expect(waitUntil(timeout: 5) { c.node.log.contains("the canvas page crashed") }, "\(c.node.log.suffix(1500))")
        let started = Date()
        // The page it showed comes back in a new browser.
        #expect(c.eval("window.pageName") == "colors", "\(c.node.log.suffix(2000))")
        // A new Chromium starts in a second or two; on a busy machine in several. The bound only
        // tells "came back" from "waited for something that never came".
        #expect(Date().timeIntervalSince(started) < 30)
    }

    @Test func aLoadThatOutlivesTheInvokeIsNotReplacedByTheScaffold() throws {
        let host = try CanvasHostServer(); defer { host.stop() }
        let c = try CanvasNode(); defer { c.stop() }
        #expect(c.eval("1") == "1")
        let r = c.invoke("canvas.navigate", #"{"url":"\#(host.base)/slow/colors.html"}"#, timeoutMs: 1500)
        #expect(!r.ok)
        // The slow page finishes loading (when, the machine decides), and then stays.
        #expect(waitUntil(timeout: 30) { c.eval("window.pageName") == "colors" }, "the slow page finished loading")
        Thread.sleep(forTimeInterval: 1)
        #expect(c.eval("window.pageName") == "colors", "the slow page stays")
    }

    @Test func snapshotOfAScrolledPageShowsWhatIsVisible() throws {
        let host = try CanvasHostServer(); defer { host.stop() }
        let c = try CanvasNode(); defer { c.stop() }
        #expect(c.invoke("canvas.navigate", #"{"url":"\#(host.base)/__openclaw__/canvas/tall.html"}"#).ok)
        #expect(c.eval("window.scrollTo(0, 2000); String(scrollY)") == "2000")
        let img = try c.snapshot(#"{"format":"png","maxWidth":640}"#)
        #expect(ImageChecks.near(img.pixel(x: img.width / 2, y: img.height / 2), 0x0000ff, tolerance: 8),
                "\(ImageChecks.hex(img.pixel(x: img.width / 2, y: img.height / 2)))")
    }

    /// Actions count from the main frame only, and a page posting in a loop is throttled.
    @Test func subframeActionsAreIgnoredAndFloodsAreThrottled() throws {
        let host = try CanvasHostServer(); defer { host.stop() }
        let c = try CanvasNode(canvasHost: host.base); defer { c.stop() }
        #expect(c.invoke("canvas.a2ui.reset").ok)
        #expect(c.eval("clickInFrame('sneaky')") == "framed")
        #expect(waitUntil(timeout: 5) { c.node.log.contains("ignored an A2UI action") }, "\(c.node.log.suffix(1500))")
        #expect(c.eval("for (let i = 0; i < 15; i++) clickButton('b' + i); 'ok'") == "ok")
        #expect(waitUntil(timeout: 5) { c.gw.all("node_event").filter { $0["name"] == "agent.request" }.count >= 10 })
        Thread.sleep(forTimeInterval: 0.5)
        let sent = c.gw.all("node_event").filter { $0["name"] == "agent.request" }
        // A burst of 10, plus what the 2/s refill allows while a slow machine works through the
        // rest; the others are refused and the page is told so.
        #expect((10...12).contains(sent.count), "\(sent.count) sent")
        #expect(!sent.contains { $0["payload"]?["key"]?.stringValue?.hasPrefix("frame-") == true })
        #expect(waitUntil(timeout: 5) { c.eval("window.statuses.filter(s => s.error === 'rate limited').length") == String(15 - sent.count) })
    }
}
