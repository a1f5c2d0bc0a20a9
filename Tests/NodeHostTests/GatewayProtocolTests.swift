@testable import Config
import Foundation
@testable import GatewaySession
@testable import HostPresence
@testable import Kit
@testable import NodeCLI
@testable import Plugins
@testable import Registry
@testable import Store
@testable import Support
@testable import TestSupport
import Testing
@testable import Transport

@Suite struct DeviceAuthPayloadTests {
    // docs/PROTOCOL.md §2.4 test vectors.
    @Test func v2Vector() {
        #expect(DeviceAuthPayload.build(version: .v2, deviceId: "dev-1", clientId: "openclaw-macos", clientMode: "ui", role: "operator",
                                        scopes: ["operator.admin", "operator.read"], signedAtMs: 1_700_000_000_000, token: nil,
                                        nonce: "nonce-abc")
                == "v2|dev-1|openclaw-macos|ui|operator|operator.admin,operator.read|1700000000000||nonce-abc")
    }

    @Test func v3Vector() {
        #expect(DeviceAuthPayload.build(version: .v3, deviceId: "dev-1", clientId: "openclaw-macos", clientMode: "ui", role: "operator",
                                        scopes: ["operator.admin", "operator.read"], signedAtMs: 1_700_000_000_000, token: "tok-123",
                                        nonce: "nonce-abc", platform: "  IOS  ", deviceFamily: "  iPhone  ")
                == "v3|dev-1|openclaw-macos|ui|operator|operator.admin,operator.read|1700000000000|tok-123|nonce-abc|ios|iphone")
    }

    @Test func v3EmptyMetadataVector() {
        #expect(DeviceAuthPayload.build(version: .v3, deviceId: "dev-2", clientId: "openclaw-ios", clientMode: "ui", role: "operator",
                                        scopes: ["operator.read"], signedAtMs: 1_700_000_000_001, token: nil, nonce: "nonce-def")
                == "v3|dev-2|openclaw-ios|ui|operator|operator.read|1700000000001||nonce-def||")
    }

    @Test func metadataNormaliser() {
        #expect(DeviceAuthPayload.normalizeMetadata("  MAC  ") == "mac")
        #expect(DeviceAuthPayload.normalizeMetadata("  İOS  ") == "İos")
        #expect(DeviceAuthPayload.normalizeMetadata(nil) == "")
    }

    @Test func nodeExample() {
        #expect(DeviceAuthPayload.build(version: .v3, deviceId: "D", clientId: "node-host", clientMode: "node", role: "node", scopes: [],
                                        signedAtMs: 5, token: "T", nonce: "N", platform: "linux", deviceFamily: "Linux")
                == "v3|D|node-host|node|node||5|T|N|linux|linux")
    }

    @Test func connectParamsAreSignedWithTheDeviceKey() throws {
        let id = try DeviceIdentity(seed: Array(repeating: 7, count: 32), createdAtMs: 0)
        let manifest = CommandRegistry.Manifest(caps: ["device"], commands: ["device.info"], permissions: ["x": true])
        let p = try GatewayProtocol.connectParams(.init(displayName: "N", modelIdentifier: "unknown", manifest: manifest,
                                                        credential: .deviceToken("dt"), identity: id, nonce: "abc", signedAtMs: 42,
                                                        signatureVersion: .v3, locale: "en-US"))
        #expect(p["auth"] == ["deviceToken": "dt"])
        #expect(p["client"]?["modelIdentifier"] == nil)   // "unknown" is not sent
        #expect(p["scopes"] == [])
        let sig = try #require(Encoding.fromBase64url(p["device"]?["signature"]?.stringValue ?? ""))
        let payload = "v3|\(id.deviceId)|node-host|node|node||42|dt|abc|linux|linux"
        #expect(Crypto.ed25519Verify(publicKey: id.publicKey, message: Array(payload.utf8), signature: sig))
        #expect(p["device"]?["signature"]?.stringValue?.count == 86)
    }

    @Test func passwordIsSentButNeverSigned() throws {
        #expect(GatewayProtocol.Credential.password("pw").signedToken == "")
        #expect(GatewayProtocol.Credential.password("pw").authObject == ["password": "pw"])
        #expect(GatewayProtocol.Credential.none.authObject == nil)
    }
}

@Suite struct GatewayFrameParsingTests {
    @Test func invokeRequestParamsJSONForms() {
        let s = GatewayProtocol.InvokeRequest(["id": "1", "command": "c", "paramsJSON": "{\"a\":1}", "timeoutMs": 500])
        #expect(s?.params == .value(["a": 1]))
        #expect(s?.timeoutMs == 500)
        #expect(GatewayProtocol.InvokeRequest(["id": "1", "command": "c", "paramsJSON": nil])?.params == InvokeParams.none)
        #expect(GatewayProtocol.InvokeRequest(["id": "1", "command": "c"])?.params == InvokeParams.none)
        #expect(GatewayProtocol.InvokeRequest(["id": "1", "command": "c", "params": ["b": 2]])?.params == .value(["b": 2]))
        #expect(GatewayProtocol.InvokeRequest(["id": "1", "command": "c", "paramsJSON": "{nope"])?.params == .unparsable)
        #expect(GatewayProtocol.InvokeRequest(["command": "c"]) == nil)
        #expect(GatewayProtocol.InvokeRequest(["id": "", "command": "c"]) == nil)
        #expect(GatewayProtocol.InvokeRequest(nil) == nil)
    }

    @Test func helloOkPolicyAndCanvas() {
        let h = GatewayProtocol.HelloOk(["type": "hello-ok", "protocol": 4, "server": ["version": "2026.6.34"],
                                         "auth": ["deviceToken": "t", "role": "node", "scopes": []],
                                         "policy": ["maxPayload": 20000, "tickIntervalMs": 15000],
                                         "canvasHostUrl": "http://gw/__openclaw__/cap/x",
                                         "pluginSurfaceUrls": ["canvas": "http://gw/c"],
                                         "snapshot": ["sessionDefaults": ["mainSessionKey": "main"]]])
        #expect(h?.deviceToken == "t")
        #expect(h?.maxPayload == 20000)   // results are fitted to what the gateway accepts
        #expect(h?.tickIntervalMs == 15000)
        #expect(h?.canvasHostUrl == "http://gw/__openclaw__/cap/x")
        #expect(h?.pluginSurfaceUrls["canvas"] == "http://gw/c")
        #expect(h?.mainSessionKey == "main")
        #expect(GatewayProtocol.HelloOk(["type": "something"]) == nil)
        let defaults = GatewayProtocol.HelloOk(["type": "hello-ok"])
        #expect(defaults?.maxPayload == 25 * 1024 * 1024)
        #expect(GatewayProtocol.HelloOk(["type": "hello-ok", "policy": ["maxPayload": 3]])?.maxPayload == 1024)
        // A gateway's 9e18 sized inbound buffers and overflowed clip bitrates: held to 1 GiB.
        #expect(GatewayProtocol.HelloOk(["type": "hello-ok", "policy": ["maxPayload": 9e18]])?.maxPayload == 1 << 30)
        #expect(defaults?.tickIntervalMs == 30000)
    }

    /// hello-ok and the error shape are decoded as structs, leniently: a field of another type
    /// than the node expects costs its default, never the session; a bad token entry is skipped.
    @Test func helloOkAndErrorsReadLeniently() {
        let h = GatewayProtocol.HelloOk(["type": "hello-ok", "protocol": "4", "server": "x",
                                         "policy": ["maxPayload": "big", "tickIntervalMs": 1.5],
                                         "auth": ["deviceToken": 7, "scopes": ["a", 2, "b"], "issuedAtMs": 1_700_000_000_000,
                                                  "deviceTokens": [["deviceToken": "op", "role": "operator", "scopes": ["operator.read"]],
                                                                   ["deviceToken": "", "role": "operator"], ["role": "node"], "junk"]],
                                         "pluginSurfaceUrls": ["canvas": "file:///etc", "other": 3, "web": "https://gw/w"],
                                         "snapshot": ["sessionDefaults": "none"]])
        #expect(h != nil)
        #expect(h?.protocolVersion == nil && h?.serverVersion == nil && h?.deviceToken == nil)
        #expect(h?.maxPayload == 25 * 1024 * 1024 && h?.tickIntervalMs == 30000)
        #expect(h?.deviceTokenScopes == ["a", "b"] && h?.issuedAtMs == 1_700_000_000_000)
        #expect(h?.extraDeviceTokens == [GatewayProtocol.IssuedToken(["deviceToken": "op", "role": "operator", "scopes": ["operator.read"]])!])
        #expect(h?.pluginSurfaceUrls == ["web": "https://gw/w"])
        #expect(h?.mainSessionKey == nil)
        #expect(GatewayProtocol.HelloOk(["protocol": 4]) == nil)  // no type: not a hello-ok
        let e = GatewayProtocol.GatewayError(["code": 5, "message": "m", "retryable": "yes",
                                              "details": ["code": "RATE_LIMITED", "retryable": true, "retryAfterMs": 1500]])
        #expect(e.code == "UNKNOWN" && e.specificCode == "RATE_LIMITED" && e.retryable && e.retryAfterMs == 1500)
        #expect(GatewayProtocol.GatewayError(nil).description == "UNKNOWN: ")
    }

    @Test func errorsPreferDetailCode() {
        let e = GatewayProtocol.GatewayError(["code": "INVALID_REQUEST", "message": "m", "details": ["code": "AUTH_TOKEN_MISMATCH"]])
        #expect(e.specificCode == "AUTH_TOKEN_MISMATCH")
        #expect(GatewayProtocol.GatewayError(["code": "NOT_PAIRED"]).specificCode == "NOT_PAIRED")
    }

    @Test func invokeResultShapes() {
        let ok = GatewayProtocol.invokeResult(id: "i", nodeId: "n", result: .success(["a": 1]))
        #expect(ok == ["id": "i", "nodeId": "n", "ok": true, "payloadJSON": "{\"a\":1}"])
        let err = GatewayProtocol.invokeResult(id: "i", nodeId: "n", result: .failure(NodeError("X_Y", "boom")))
        #expect(err == ["id": "i", "nodeId": "n", "ok": false, "error": ["code": "X_Y", "message": "X_Y: boom"]])
    }

    /// The frames the node sends, as their types write them: the exact text (sorted keys, absent
    /// optionals left out), and the one-pass success frame the same as the tree's text.
    @Test func sentFramesAreExactlyTheirText() {
        #expect(GatewayProtocol.request(id: "r1", method: "node.event", params: GatewayProtocol.nodeEvent("e", payload: ["a": [1, "x"]])).jsonString()
                == #"{"id":"r1","method":"node.event","params":{"event":"e","payloadJSON":"{\"a\":[1,\"x\"]}"},"type":"req"}"#)
        #expect(GatewayProtocol.response(id: "q", ok: true, payload: ["pong": true], error: nil).jsonString()
                == #"{"id":"q","ok":true,"payload":{"pong":true},"type":"res"}"#)
        #expect(GatewayProtocol.response(id: "q", ok: false, payload: nil, error: .invalidRequest("no")).jsonString()
                == #"{"error":{"code":"INVALID_REQUEST","message":"INVALID_REQUEST: no"},"id":"q","ok":false,"type":"res"}"#)
        let payload: JSONValue = ["base64": .string(String(repeating: "QUJD", count: 1000)), "note": "a \"q\" \n", "n": 1.5]
        for result in [Result<JSONValue, NodeError>.success(payload), .success(.null), .failure(NodeError("X_Y", "boom"))] {
            for structured in [false, true] {
                let bytes = GatewayProtocol.invokeResultFrame(frameId: "f", id: "i", nodeId: "n", result: result, structured: structured)
                let tree = GatewayProtocol.request(id: "f", method: "node.invoke.result",
                                                   params: GatewayProtocol.invokeResult(id: "i", nodeId: "n", result: result, structured: structured))
                #expect(String(decoding: bytes, as: UTF8.self) == tree.jsonString())
            }
        }
        // A structured-result command (mcp.tools.call.v1) sends the object itself, and no payloadJSON.
        #expect(String(decoding: GatewayProtocol.invokeResultFrame(frameId: "f", id: "i", nodeId: "n", result: .success(["a": 1]), structured: true), as: UTF8.self)
                == #"{"id":"f","method":"node.invoke.result","params":{"id":"i","nodeId":"n","ok":true,"payload":{"a":1}},"type":"req"}"#)
    }

    @Test func connectParamsAreTheirTypesText() throws {
        let id = try DeviceIdentity(seed: Array(repeating: 7, count: 32), createdAtMs: 0)
        let manifest = CommandRegistry.Manifest(caps: ["device"], commands: ["device.info"], permissions: ["x": true])
        let p = try GatewayProtocol.connectParams(.init(displayName: "N", modelIdentifier: "Box 1", manifest: manifest,
                                                        credential: .none, identity: id, nonce: "abc", signedAtMs: 42,
                                                        signatureVersion: .v3, locale: "en-US"))
        #expect(Set(p.objectValue?.keys.map { $0 } ?? []) == ["minProtocol", "maxProtocol", "client", "role", "scopes", "caps", "commands",
                                                                "permissions", "locale", "userAgent", "device"])
        #expect(p["client"] == ["id": "node-host", "version": .string(NodeVersion.version), "platform": "linux", "deviceFamily": "Linux",
                                "mode": "node", "displayName": "N", "modelIdentifier": "Box 1"])
        #expect(p["device"]?["signedAt"] == 42 && p["device"]?["nonce"] == "abc" && p["permissions"] == ["x": true])
        #expect(p["minProtocol"] == 3 && p["maxProtocol"] == 4 && p["caps"] == ["device", "device-pairing-wait"] && p["role"] == "node")
    }

    /// Received frames are read into their types tolerantly: unknown fields are ignored, a field
    /// the node reads with the wrong type makes the frame malformed, a present null stays null.
    @Test func receivedFramesDecodeIntoTheirTypes() {
        guard case .event("tick", let p)? = GatewayProtocol.parse(#"{"type":"event","event":"tick","payload":null,"seq":4}"#) else {
            Issue.record("event not parsed"); return
        }
        #expect(p == .null)
        guard case .event(_, let absent)? = GatewayProtocol.parse(#"{"type":"event","event":"x"}"#) else { Issue.record("event"); return }
        #expect(absent == Optional<JSONValue>.none, "\(String(describing: absent))")
        guard case .response("r", false, Optional<JSONValue>.none, let e?)? = GatewayProtocol.parse(#"{"type":"res","id":"r","ok":false,"error":{"code":"NOT_PAIRED","message":"m"}}"#) else {
            Issue.record("res not parsed"); return
        }
        #expect(e.code == "NOT_PAIRED" && e.message == "m")
        guard case .request("q", "ping", Optional<JSONValue>.none)? = GatewayProtocol.parse(#"{"type":"req","id":"q","method":"ping"}"#) else { Issue.record("req"); return }
        #expect(GatewayProtocol.parse(#"{"type":"res","id":7,"ok":true}"#) == nil)
        #expect(GatewayProtocol.parse(#"{"type":"event"}"#) == nil)
        #expect(GatewayProtocol.parse(#"{"type":3}"#) == nil)
        #expect(GatewayProtocol.parse("[1]") == nil)
        // An invoke with a timeoutMs that is not an integer still runs (with the default).
        let r = GatewayProtocol.InvokeRequest(["id": "1", "command": "c", "timeoutMs": 1.5, "paramsJSON": 3, "params": ["a": 1]])
        #expect(r?.timeoutMs == nil && r?.params == .value(["a": 1]))
    }
}

@Suite struct BackoffAndSetupCodeTests {
    @Test func backoffGrowsWithJitterAndIsCapped() {
        var b = Backoff()
        var delays: [Int64] = []
        for _ in 0..<12 { delays.append(b.next().milliseconds) }
        #expect(delays.allSatisfy { $0 >= 100 && $0 <= 30_000 })
        #expect(delays[0] <= 500)
        #expect(delays.suffix(4).allSatisfy { $0 >= 15_000 })
        b.reset()
        #expect(b.next().milliseconds <= 500)
    }

    @Test func setupCodeDecoding() throws {
        let code = Encoding.base64url(Array(#"{"url":"wss://gw.example:18789","bootstrapToken":"bt","urls":["ws://10.0.0.2:18789"]}"#.utf8))
        let s = try SetupCode(decoding: code)
        #expect(s.url == "wss://gw.example:18789")
        #expect(s.bootstrapToken == "bt")
        #expect(s.urls == ["ws://10.0.0.2:18789"])
        #expect(throws: SetupCode.Invalid.self) { try SetupCode(decoding: "!!!") }
        #expect(throws: SetupCode.Invalid.self) { try SetupCode(decoding: Encoding.base64url(Array(#"{"url":"x"}"#.utf8))) }
        #expect(throws: SetupCode.Invalid.self) { try SetupCode(decoding: String(repeating: "A", count: 3000)) }
    }

    @Test func fingerprintNormalisation() {
        #expect(TLSPolicy.normalizeFingerprint("sha256:AB:cd:01") == "abcd01")
        #expect(TLSPolicy.normalizeFingerprint("SHA-256 ab cd") == "abcd")
        #expect(TLSPolicy.normalizeFingerprint("abcd") == "abcd")
    }
}
