@testable import CanvasCapability
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

/// The pure parts of the canvas: URL resolution, A2UI validation and action messages.
@Suite struct CanvasUnitTests {
    let host = "http://gw.local:18789/__openclaw__/cap/TOK"

    @Test func urlResolution() throws {
        #expect(try CanvasURL.resolve("", canvasHost: nil) == .scaffold)
        #expect(try CanvasURL.resolve("  / ", canvasHost: host) == .scaffold)
        #expect(try CanvasURL.resolve("https://example.org/a?b=1", canvasHost: nil) == .url("https://example.org/a?b=1"))
        #expect(try CanvasURL.resolve("report/index.html", canvasHost: host)
                == .url("http://gw.local:18789/__openclaw__/cap/TOK/__openclaw__/canvas/report/index.html"))
        #expect(try CanvasURL.resolve("/__openclaw__/a2ui/?platform=linux", canvasHost: host)
                == .url("http://gw.local:18789/__openclaw__/cap/TOK/__openclaw__/a2ui/?platform=linux"))
        // Newer gateways pass the capability as a query: it stays on every resolved URL.
        #expect(try CanvasURL.resolve("x.html#top", canvasHost: "http://gw:18789/?oc_cap=abc")
                == .url("http://gw:18789/__openclaw__/canvas/x.html?oc_cap=abc#top"))
        #expect(throws: NodeError.self) { try CanvasURL.resolve("x.html", canvasHost: nil) }
        #expect(throws: NodeError.self) { try CanvasURL.resolve("javascript:alert(1)", canvasHost: host) }
        #expect(throws: NodeError.self) { try CanvasURL.resolve("chrome://settings", canvasHost: host) }
        #expect(throws: NodeError.self) { try CanvasURL.resolve("file:///etc/passwd", canvasHost: host) }
    }

    @Test func a2uiValidation() throws {
        let ok = try A2UIMessages.from(messages: nil, jsonl: "{\"beginRendering\":{}}\n\n  {\"deleteSurface\":{}}  \n")
        #expect(ok.count == 2)
        func message(_ m: [JSONValue]?, _ j: String?) -> String {
            do { _ = try A2UIMessages.from(messages: m, jsonl: j); return "" } catch { return error.message }
        }
        #expect(message([["surfaceUpdate": [:], "dataModelUpdate": [:]]], nil)
                == "INVALID_REQUEST: A2UI messages[0]: expected exactly one of beginRendering, dataModelUpdate, deleteSurface, surfaceUpdate; found: dataModelUpdate, surfaceUpdate")
        #expect(message(nil, "{\"createSurface\":{}}").contains("A2UI JSONL line 1: looks like A2UI v0.9"))
        #expect(message(nil, "[1]") == "INVALID_REQUEST: A2UI JSONL line 1: expected a JSON object")
        #expect(message([], nil) == "INVALID_REQUEST: messages[] required")
        #expect(message(nil, " \n ") == "INVALID_REQUEST: jsonl required")
        #expect(message(nil, String(repeating: " ", count: A2UIMessages.maxBytes + 1) + "x").contains("over"))
        // The push script hands the array to the page's renderer and returns its answer.
        #expect(A2UIMessages.pushScript([["beginRendering": [:]]]).contains(#"host.applyMessages([{"beginRendering":{}}])"#))
    }

    @Test func actionMessageMatchesTheApps() throws {
        let a = try #require(A2UIAction(message: #"{"userAction":{"id":"a1","name":"Pick Color!","surfaceId":"","sourceComponentId":"list item 3","context":{"color":"red"}}}"#))
        #expect(a.agentMessage(sessionKey: "agent:main:main", host: "Peter’s Pi", instanceId: "ABCDEF")
                == #"CANVAS_A2UI action=Pick_Color_ session=agent:main:main surface=main component=list_item_3 host=Peter_s_Pi instance=abcdef ctx={"color":"red"} default=update_canvas"#)
        let p = a.eventPayload(sessionKey: "main", host: "h", instanceId: "i")
        #expect(p["key"] == "a1" && p["thinking"] == "low" && p["deliver"] == false && p["sessionKey"] == "main")
        // `action` is accepted for the name; no name or no userAction → dropped.
        #expect(A2UIAction(message: #"{"userAction":{"action":"go"}}"#)?.name == "go")
        #expect(A2UIAction(message: #"{"userAction":{"id":"x"}}"#) == nil)
        #expect(A2UIAction(message: #"{"other":1}"#) == nil)
        #expect(A2UIAction(message: "not json") == nil)
        #expect(A2UIAction.tag("") == "-")
    }

    @Test func localHostsForActions() {
        for h in ["127.0.0.1", "localhost", "gw.local", "10.1.2.3", "192.168.1.9", "172.20.0.1", "::1", "fd12::1"] {
            #expect(LocalHost.isLocal(h), "\(h)")
        }
        for h in ["example.org", "8.8.8.8", "172.32.0.1", "fdroid.org", "2001:db8::1", "box.tail1234.ts.net", "100.64.0.7", "nas"] {
            #expect(!LocalHost.isLocal(h), "\(h)")
        }
    }

    @Test func actionRateLimit() {
        var limit = ActionRateLimit()
        let t0 = ContinuousClock.now
        let burst = (0..<20).filter { _ in limit.allow(now: t0) }.count
        #expect(burst == 10)
        let tooSoon = limit.allow(now: t0 + .milliseconds(100))
        #expect(!tooSoon)
        let later = limit.allow(now: t0 + .seconds(1))
        #expect(later)
    }

    @Test func evalStringForms() {
        #expect(CanvasSession.stringForm(["type": "number", "value": 2, "description": "2"]) == "2")
        #expect(CanvasSession.stringForm(["type": "number", "unserializableValue": "NaN", "description": "NaN"]) == "NaN")
        #expect(CanvasSession.stringForm(["type": "object", "subtype": "null", "value": .null]) == "")
        #expect(CanvasSession.stringForm(["type": "object", "value": ["a": [1]]]) == #"{"a":[1]}"#)
        #expect(CanvasSession.stringForm(["type": "undefined"]) == "")
    }

    @Test func snapshotQualityScales() {
        #expect(CanvasSnapshotParams().jpegQuality == 82)
        #expect(CanvasSnapshotParams(quality: 0.5).jpegQuality == 50)
        #expect(CanvasSnapshotParams(quality: 75).jpegQuality == 75)
    }
}
