@testable import Config
import Foundation
@testable import HostPresence
@testable import Kit
@testable import NodeCLI
@testable import Registry
@testable import Store
@testable import Support
@testable import TestSupport
import Testing

/// canvas.a2ui.* against the test renderer page on the loopback canvas host (advertised by the
/// test gateway as hello-ok.canvasHostUrl), and user actions back to the gateway as agent.request.
@Suite(.serialized, .enabled(if: CanvasNode.browserInstalled, "needs chromium-headless-shell (scripts/setup installs it)"))
struct CanvasA2UITests {
    static let begin = #"{"beginRendering":{"surfaceId":"main","root":"col"}}"#
    static let update = #"{"surfaceUpdate":{"surfaceId":"main","components":[{"id":"col","component":{"Column":{"children":{"explicitList":[]}}}}]}}"#

    @Test func pushResetAndActionsRoundTrip() throws {
        let host = try CanvasHostServer(); defer { host.stop() }
        let c = try CanvasNode(canvasHost: host.base + "/__openclaw__/cap/TOK"); defer { c.stop() }
        let push = c.invoke("canvas.a2ui.push", #"{"messages":[\#(Self.begin),\#(Self.update)]}"#)
        #expect(push.ok, "\(String(describing: push.error)) \(c.node.log.suffix(1500))")
        #expect(push.payload?["ok"] == true && push.payload?["applied"] == 2, "\(String(describing: push.payload))")
        #expect(host.requests().contains { $0.hasPrefix("/__openclaw__/cap/TOK/__openclaw__/a2ui/?platform=linux") })
        #expect(c.eval("window.received.map(m => Object.keys(m)[0]).join(',')") == "beginRendering,surfaceUpdate")

        let jsonl = JSONValue.object(["jsonl": .string(Self.update + "\n\n" + #"{"dataModelUpdate":{"surfaceId":"main","contents":[]}}"#)]).jsonString()
        let pushed = c.invoke("canvas.a2ui.pushJSONL", jsonl)
        #expect(pushed.payload?["applied"] == 2, "\(String(describing: pushed.error))")
        #expect(c.eval("window.received.length") == "4")

        let reset = c.invoke("canvas.a2ui.reset")
        #expect(reset.payload?["reset"] == true)
        #expect(c.eval("window.received.length + ':' + window.resets") == "0:1")

        // A button press in the page reaches the gateway as the apps' agent.request.
        #expect(c.eval(#"clickButton('approve', {n: 1, who: 'me'})"#) == "clicked")
        let ev = try #require(c.gw.waitFor("node_event", timeout: 10) { $0["name"] == "agent.request" }, "\(c.node.log.suffix(2000))")
        let p = try #require(ev["payload"])
        let deviceId = try #require(Self.deviceId(c))
        #expect(p["message"]?.stringValue == "CANVAS_A2UI action=approve session=main surface=main component=btn_approve host=Test_Node instance=\(deviceId.lowercased()) ctx={\"n\":1,\"who\":\"me\"} default=update_canvas",
                "\(String(describing: p["message"]))")
        #expect(p["sessionKey"] == "main" && p["thinking"] == "low" && p["deliver"] == false && p["key"] == "act-approve")
        // …and the page hears that it was sent.
        let statuses = #"JSON.stringify(window.statuses.map(s => [s.id, s.ok, s.error]))"#
        #expect(waitUntil(timeout: 5) { c.eval(statuses) == #"[["act-approve",true,""]]"# }, "\(c.eval(statuses) ?? "")")
        #expect(c.gw.schemaErrors.isEmpty, "\(c.gw.schemaErrors)")
    }

    static func deviceId(_ c: CanvasNode) -> String? {
        c.node.log.split(separator: "\n").first { $0.contains("starting: device ") }
            .flatMap { $0.components(separatedBy: "starting: device ").last?.split(separator: ",").first.map(String.init) }
    }

    @Test func badMessagesAreInvalidRequests() throws {
        let host = try CanvasHostServer(); defer { host.stop() }
        let c = try CanvasNode(canvasHost: host.base); defer { c.stop() }
        let cases: [(String, String)] = [
            (#"{"messages":[{"beginRendering":{},"surfaceUpdate":{}}]}"#, "expected exactly one of"),
            (#"{"messages":[{"createSurface":{"surfaceId":"x"}}]}"#, "v0.9"),
            (#"{"messages":[42]}"#, "expected a JSON object"),
            (#"{"jsonl":"{\"surfaceUpdate\":{}}\nnot json"}"#, "line 2"),
            (#"{}"#, "messages or jsonl required"),
        ]
        for (params, text) in cases {
            let r = c.invoke("canvas.a2ui.push", params)
            #expect(r.error?["code"] == "INVALID_REQUEST", "\(params)")
            #expect(r.error?["message"]?.stringValue?.contains(text) == true, "\(params): \(String(describing: r.error))")
        }
    }

    @Test func noCanvasHostAndAHostThatNeverGetsReady() throws {
        let none = try CanvasNode(); defer { none.stop() }
        let r = none.invoke("canvas.a2ui.push", #"{"messages":[\#(Self.begin)]}"#)
        #expect(r.error?["code"] == "A2UI_HOST_NOT_CONFIGURED", "\(String(describing: r.error))")
        none.stop()

        let host = try CanvasHostServer(); defer { host.stop() }
        let c = try CanvasNode(canvasHost: host.base + "/never-ready"); defer { c.stop() }
        let started = Date()
        let unready = c.invoke("canvas.a2ui.reset")
        #expect(unready.error?["code"] == "A2UI_HOST_UNAVAILABLE", "\(String(describing: unready.error))")
        #expect(Date().timeIntervalSince(started) < 12)
    }

    /// On (re)connect to a gateway with a canvas host, a canvas showing the scaffold switches to the
    /// A2UI page; a page an agent navigated to is left alone.
    @Test func connectBringsUpTheA2UIPageUnlessSomethingElseIsShown() throws {
        let host = try CanvasHostServer(); defer { host.stop() }
        let c = try CanvasNode(canvasHost: host.base); defer { c.stop() }
        #expect(c.eval("typeof window.__openclaw") == "object")  // scaffold, browser running
        let port = c.gw.port, state = c.gw.stateFile
        c.gw.stop()
        let gw2 = try TestGateway(port: port, stateFile: state, args: ["--auto-approve", "--canvas-host", host.base])
        defer { gw2.stop() }
        _ = try #require(gw2.waitFor("hello", timeout: 30), "\(c.node.log.suffix(1500))")
        #expect(waitUntil(timeout: 10) { c.node.log.contains("canvas shows the A2UI page of the gateway") }, "\(c.node.log.suffix(1500))")
        let path = gw2.invoke("canvas.eval", paramsJSON: #"{"javaScript":"location.pathname"}"#)?["payload"]?["result"]
        #expect(path == "/__openclaw__/a2ui/")
        // Now an agent's page: the next reconnect keeps it.
        #expect(gw2.invoke("canvas.navigate", paramsJSON: #"{"url":"colors.html"}"#)?["ok"] == true)
        gw2.stop()
        let gw3 = try TestGateway(port: port, stateFile: state, args: ["--auto-approve", "--canvas-host", host.base])
        defer { gw3.stop() }
        _ = try #require(gw3.waitFor("hello", timeout: 30))
        Thread.sleep(forTimeInterval: 0.5)
        #expect(gw3.invoke("canvas.eval", paramsJSON: #"{"javaScript":"window.pageName"}"#)?["payload"]?["result"] == "colors")
    }

    /// An expired scoped canvas URL (401): the node asks the gateway for a fresh one once and
    /// pushes through it, as the apps do.
    @Test func expiredCanvasCapabilityIsRefreshedOnce() throws {
        let host = try CanvasHostServer(); defer { host.stop() }
        let c = try CanvasNode(canvasHost: host.base + "/__openclaw__/cap/expired1",
                               gatewayArgs: ["--canvas-refresh-host", host.base + "/__openclaw__/cap/good2"])
        defer { c.stop() }
        let r = c.invoke("canvas.a2ui.push", #"{"messages":[\#(Self.begin)]}"#)
        #expect(r.ok, "\(String(describing: r.error)) \(c.node.log.suffix(1500))")
        #expect(c.gw.waitFor("canvas_refresh", timeout: 1) != nil)
        #expect(host.requests().contains { $0.hasPrefix("/__openclaw__/cap/good2/__openclaw__/a2ui/") })
        #expect(c.gw.schemaErrors.isEmpty, "\(c.gw.schemaErrors)")
    }

    /// The same for a canvas document: a 401 from the host → refresh → the page loads.
    @Test func relativeNavigateRefreshesAnExpiredCapability() throws {
        let host = try CanvasHostServer(); defer { host.stop() }
        let c = try CanvasNode(canvasHost: host.base + "/__openclaw__/cap/expired1",
                               gatewayArgs: ["--canvas-refresh-host", host.base + "/__openclaw__/cap/good2"])
        defer { c.stop() }
        #expect(c.invoke("canvas.navigate", #"{"url":"colors.html"}"#).ok, "\(c.node.log.suffix(1500))")
        #expect(c.eval("window.pageName") == "colors")
        #expect(host.requests().contains("/__openclaw__/cap/good2/__openclaw__/canvas/colors.html"))
    }

    /// Actions while the gateway is away: the page is told, nothing is queued.
    @Test func actionWhileDisconnectedReportsFailureToThePage() throws {
        let host = try CanvasHostServer(); defer { host.stop() }
        let c = try CanvasNode(canvasHost: host.base); defer { c.stop() }
        #expect(c.invoke("canvas.a2ui.reset").ok)
        c.gw.stop()
        #expect(waitUntil(timeout: 10) { (try? c.node.status())?["daemon"]?["connected"] == false })
        let r = try c.node.cli(["invoke", "canvas.eval", "--params", #"{"javaScript":"clickButton('later')"}"#])
        #expect(r.code == 0, "\(r.stderr)")
        #expect(waitUntil(timeout: 5) {
            let s = try? c.node.cli(["invoke", "canvas.eval", "--params", #"{"javaScript":"JSON.stringify(window.statuses)"}"#])
            return s?.stdout.contains("gateway not connected") == true
        }, "\(c.node.log.suffix(1500))")
    }
}
