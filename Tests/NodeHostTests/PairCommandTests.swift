@testable import Config
import Foundation
@testable import Kit
@testable import Store
@testable import Support
@testable import TestSupport
import Testing

/// `openclaw-node pair` with a setup code, an oc-pair:// link and a one-time join URL served by
/// the test gateway; the refusals with upstream's messages; gateway.setupCode as a join URL.
@Suite(.serialized) struct PairCommandTests {
    static func code(_ payload: JSONValue) -> String { Encoding.base64url(Array(payload.jsonString().utf8)) }
    static var inTenMinutes: JSONValue { .number(Double(WallClock.milliseconds + 600_000)) }

    /// A node whose config names no gateway and has discovery off: only `pair` can give it one.
    static func bareNode() -> NodeUnderTest { NodeUnderTest(gatewaySection: "discovery: { lan: false }") }

    /// The state database and its WAL, as bytes (a secret must not be in either).
    static func stateBytes(_ node: NodeUnderTest) -> Data {
        ["state.db", "state.db-wal"].reduce(into: Data()) { d, f in
            d.append((try? Data(contentsOf: URL(fileURLWithPath: node.dir + "/state/" + f))) ?? Data())
        }
    }

    @Test func setupCodeThenRunUsesTheStoredGatewayAndDeviceToken() throws {
        let gw = try TestGateway(stateFile: TestPaths.tempDir("gw") + "/gateway.json", args: ["--bootstrap", "boot-secret-1"])
        defer { gw.stop() }
        let node = Self.bareNode(); defer { node.cleanup() }
        let code = Self.code(["url": .string(gw.url), "bootstrapToken": "boot-secret-1", "expiresAtMs": Self.inTenMinutes])
        let r = try node.cli(["pair", code, "--display-name", "Fleet Node 7"])
        #expect(r.code == 0, "\(r.stdout)\(r.stderr)")
        #expect(r.stdout.contains("Paired with \(gw.url) as Fleet Node 7") && r.stdout.contains("bootstrap token was not stored"), "\(r.stdout)")
        let hello = try #require(gw.waitFor("hello"))
        #expect(hello["auth"] == ["bootstrapToken"])
        #expect(gw.all("connect").last?["client"]?["displayName"] == "Fleet Node 7")
        let st = try #require(try node.status())
        #expect(st["gateways"]?.arrayValue?.first?["url"]?.stringValue == gw.url)
        #expect(st["gateways"]?.arrayValue?.first?["hasDeviceToken"] == true)
        #expect(Self.stateBytes(node).range(of: Data("boot-secret-1".utf8)) == nil, "the bootstrap token reached the state database")
        // The daemon, with no gateway in its config, connects to the stored one with the device token.
        try node.start()
        let again = try #require(gw.waitFor("hello", timeout: 20), "\(node.log)")
        #expect(again["auth"] == ["deviceToken"])
        #expect(node.log.contains("using the gateway `openclaw-node pair` stored"))
        #expect(gw.schemaErrors.isEmpty, "\(gw.schemaErrors)")
    }

    @Test func ocPairLinkWithURLsAndFingerprintJSON() throws {
        let gw = try TestGateway(stateFile: TestPaths.tempDir("gw") + "/gateway.json", args: ["--bootstrap", "boot-2"])
        defer { gw.stop() }
        let node = Self.bareNode(); defer { node.cleanup() }
        let fp = String(repeating: "ab", count: 32)
        let code = Self.code(["url": .string(gw.url), "urls": [.string(gw.url), "ws://192.168.1.10:18789"], "bootstrapToken": "boot-2",
                              "tlsFingerprint": .string("sha256:" + fp.uppercased())])
        let r = try node.cli(["pair", "OC-PAIR://" + code, "--json"])
        #expect(r.code == 0, "\(r.stdout)\(r.stderr)")
        let out = try #require(JSONValue.parse(r.stdout))
        #expect(out["ok"] == true && out["urls"]?.arrayValue?.count == 2 && out["tlsFingerprint"]?.stringValue == fp, "\(out)")
        #expect(out["bootstrapTokenStored"] == false && out["deviceTokenStored"] == true)
        let st = try #require(try node.status())
        #expect(st["pairedGateway"]?["url"]?.stringValue == gw.url && st["pairedGateway"]?["urls"]?.arrayValue?.count == 2, "\(st)")
        #expect(gw.waitFor("hello")?["auth"] == ["bootstrapToken"])
    }

    @Test func joinURLIsFetchedOnceAndRefusalsUseUpstreamsMessages() throws {
        let gw = try TestGateway(stateFile: TestPaths.tempDir("gw") + "/gateway.json", args: ["--bootstrap", "boot-j"])
        defer { gw.stop() }
        let joinCode = "Zq9X_aB-3kLmN0pQrS7tUv"
        gw.command(["cmd": "join_code", "code": .string(joinCode), "payload": ["url": .string(gw.url), "bootstrapToken": "boot-j",
                                                                               "expiresAtMs": Self.inTenMinutes]])
        _ = gw.waitFor("join_code_set")
        let join = "http://127.0.0.1:\(gw.port)/j/\(joinCode)"
        let first = Self.bareNode(); defer { first.cleanup() }
        let ok = try first.cli(["pair", join])
        #expect(ok.code == 0, "\(ok.stdout)\(ok.stderr)")
        #expect(gw.waitFor("join_fetch")?["found"] == true)
        #expect(gw.waitFor("hello")?["auth"] == ["bootstrapToken"])

        let second = Self.bareNode(); defer { second.cleanup() }
        let used = try second.cli(["pair", join])
        #expect(used.code == 1 && used.stderr.contains("Invalid pairing setup code or URL.") && used.stderr.contains("already used"), "\(used.stderr)")
        #expect(gw.waitFor("join_fetch")?["found"] == false)

        gw.command(["cmd": "join_code", "code": "expiredCode123", "payload": ["url": .string(gw.url), "bootstrapToken": "x", "expiresAtMs": 1000]])
        _ = gw.waitFor("join_code_set")
        let expired = try second.cli(["pair", "http://127.0.0.1:\(gw.port)/j/expiredCode123"])
        #expect(expired.code == 1 && expired.stderr.contains("Pairing setup code has expired."), "\(expired.stderr)")

        gw.command(["cmd": "join_code", "code": "noTokenCode1", "payload": ["url": .string(gw.url)]])
        _ = gw.waitFor("join_code_set")
        let noToken = try second.cli(["pair", "http://127.0.0.1:\(gw.port)/j/noTokenCode1"])
        #expect(noToken.code == 1 && noToken.stderr.contains("Invalid pairing setup payload."), "\(noToken.stderr)")

        let refusedForms: [(String, String)] = [
            ("http://127.0.0.1:\(gw.port)/j/bad!code", "Invalid pairing setup code or URL."),
            ("http://192.0.2.1/j/abcdef", "Invalid pairing setup code or URL."),  // plain http off loopback: never fetched
            ("!!!", "Invalid pairing setup code or URL."),
            ("oc-pair://", "Invalid pairing setup code or URL."),
            (Self.code(["url": "http://gw.example", "bootstrapToken": "t"]), "Invalid pairing setup payload."),
            (Self.code(["url": "ws://user@gw.example", "bootstrapToken": "t"]), "Invalid pairing setup payload."),
            (Self.code(["url": .string(gw.url), "bootstrapToken": "t", "expiresAtMs": 1]), "Pairing setup code has expired."),
            (Self.code(["url": .string(gw.url), "bootstrapToken": "t", "urls": []]), "Invalid pairing setup payload."),
        ]
        for (text, message) in refusedForms {
            let r = try second.cli(["pair", text])
            #expect(r.code == 1 && r.stderr.contains(message), "\(text): \(r.stderr)")
        }
        #expect(try second.status()?["gateways"]?.arrayValue?.isEmpty == true)
    }

    /// gateway.setupCode may be a join URL: the daemon fetches it, pairs, and after a restart (the
    /// join code is gone) uses the gateway it named with its device token.
    @Test func configSetupCodeAsJoinURL() throws {
        let gw = try TestGateway(stateFile: TestPaths.tempDir("gw") + "/gateway.json", args: ["--bootstrap", "boot-c"])
        defer { gw.stop() }
        gw.command(["cmd": "join_code", "code": "cfgJoinCode42", "payload": ["url": .string(gw.url), "bootstrapToken": "boot-c"]])
        _ = gw.waitFor("join_code_set")
        let node = NodeUnderTest(gatewaySection: "setupCode: 'http://127.0.0.1:\(gw.port)/j/cfgJoinCode42', discovery: { lan: false }")
        defer { node.cleanup() }
        try node.start()
        #expect(gw.waitFor("hello", timeout: 20)?["auth"] == ["bootstrapToken"], "\(node.log)")
        node.stop()
        try node.start()
        #expect(gw.waitFor("hello", timeout: 20)?["auth"] == ["deviceToken"], "\(node.log)")
        #expect(node.log.contains("using the gateway it named before"), "\(node.log)")
    }
}
