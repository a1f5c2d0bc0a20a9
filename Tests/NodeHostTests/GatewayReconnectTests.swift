@testable import Config
import Foundation
@testable import GatewaySession
@testable import Kit
@testable import Support
@testable import TestSupport
import Testing

/// Every row of the reconnect decision (docs/PROTOCOL.md §3.8) as a gateway reply to the real
/// daemon: what it logs, what `status` says, and how it resumes. Short delays come from the
/// documented OPENCLAW_NODE_RECONNECT_* knobs; nothing here measures time.
@Suite(.serialized) struct GatewayReconnectTests {
    enum Then {
        /// Retries by itself; the log says this.
        case retries(log: String)
        /// Pauses with this detail code; resumed by the given way.
        case pauses(code: String?, resume: Resume)
        /// Waits for approval (pendingApproval in status), retrying by itself.
        case pending
    }
    enum Resume { case reconnectCommand, sighup }

    struct Row {
        let name: String
        let error: JSONValue
        let times: Int
        let then: Then
    }

    static func err(_ code: String, _ details: JSONValue? = nil, retryable: Bool? = nil, retryAfterMs: Int? = nil,
                    message: String = "refused by the test") -> JSONValue {
        var o: [String: JSONValue] = ["code": .string(code), "message": .string(message)]
        if let details { o["details"] = details }
        if let retryable { o["retryable"] = .bool(retryable) }
        if let retryAfterMs { o["retryAfterMs"] = .number(Double(retryAfterMs)) }
        return .object(o)
    }

    static let hint = "Approve this device from the pending pairing requests."

    static let rows: [Row] = [
        Row(name: "token mismatch: one retry with the stored device token",
            error: err("INVALID_REQUEST", ["code": "AUTH_TOKEN_MISMATCH", "recommendedNextStep": "retry_with_device_token"]),
            times: 1, then: .retries(log: "retrying once with the stored device token")),
        Row(name: "token mismatch twice: the retry is used, then it pauses",
            error: err("INVALID_REQUEST", ["code": "AUTH_TOKEN_MISMATCH"]), times: 2,
            then: .pauses(code: "AUTH_TOKEN_MISMATCH", resume: .reconnectCommand)),
        Row(name: "pairing with wait_then_retry keeps asking",
            error: err("NOT_PAIRED", ["code": "PAIRING_REQUIRED", "reason": "not-paired", "requestId": "req-wait-1",
                                      "remediationHint": .string(hint), "recommendedNextStep": "wait_then_retry",
                                      "retryable": true, "pauseReconnect": false]),
            times: 2, then: .pending),
        Row(name: "bare pairing pauses",
            error: err("NOT_PAIRED", ["code": "PAIRING_REQUIRED", "reason": "not-paired", "requestId": "req-pause-1",
                                      "remediationHint": .string(hint)]),
            times: 1, then: .pauses(code: "PAIRING_REQUIRED", resume: .sighup)),
        Row(name: "protocol mismatch pauses", error: err("INVALID_REQUEST", ["code": "PROTOCOL_MISMATCH", "expectedProtocol": 5]),
            times: 1, then: .pauses(code: "PROTOCOL_MISMATCH", resume: .reconnectCommand)),
        Row(name: "retryable:false pauses", error: err("UNAVAILABLE", retryable: false), times: 1,
            then: .pauses(code: "UNAVAILABLE", resume: .sighup)),
        Row(name: "rate limit pauses despite wait_then_retry",
            error: err("INVALID_REQUEST", ["code": "AUTH_RATE_LIMITED", "recommendedNextStep": "wait_then_retry"], retryAfterMs: 100),
            times: 1, then: .pauses(code: "AUTH_RATE_LIMITED", resume: .reconnectCommand)),
        Row(name: "update_auth_configuration pauses", error: err("UNAUTHORIZED", ["recommendedNextStep": "update_auth_configuration"]),
            times: 1, then: .pauses(code: "UNAUTHORIZED", resume: .reconnectCommand)),
        Row(name: "retryAfterMs is honoured", error: err("UNAVAILABLE", retryable: true, retryAfterMs: 150), times: 1,
            then: .retries(log: "(the gateway asked to wait)")),
        Row(name: "anything else backs off", error: err("UNAVAILABLE", ["code": "GATEWAY_STARTING"]), times: 2,
            then: .retries(log: "gateway refused: GATEWAY_STARTING")),
    ] + ReconnectPolicy.authPauseCodes.sorted().filter { $0 != "AUTH_RATE_LIMITED" && $0 != "AUTH_TOKEN_MISMATCH" }.map { code in
        // A rejected device token is first dropped and the configured credential tried at once
        // (the same attempt); the second refusal is the one the decision sees.
        Row(name: "\(code) pauses", error: err("INVALID_REQUEST", ["code": .string(code)]), times: code == "AUTH_DEVICE_TOKEN_MISMATCH" ? 2 : 1,
            then: .pauses(code: code, resume: .reconnectCommand))
    }

    static let fastEnv = ["OPENCLAW_NODE_RECONNECT_INITIAL_MS": "100", "OPENCLAW_NODE_RECONNECT_MAX_MS": "400"]

    /// A test gateway with `args` and a node on it with the short reconnect delays, started.
    static func started(_ args: [String], extraGateway: String = "") throws -> (TestGateway, NodeUnderTest) {
        let gw = try TestGateway(stateFile: TestPaths.tempDir("gw") + "/gateway.json", args: args)
        let node = NodeUnderTest(gatewayURL: gw.url, extraGateway: extraGateway)
        node.extraEnv = fastEnv
        do { try node.start() } catch { node.cleanup(); gw.stop(); throw error }
        return (gw, node)
    }

    func gatewayState(_ node: NodeUnderTest) -> JSONValue? { (try? node.status())?["daemon"]?["gateway"] }

    @Test func everyRowAsAGatewayReply() throws {
        let (gw, node) = try Self.started(["--auto-approve"])
        defer { node.cleanup(); gw.stop() }
        _ = try #require(gw.waitFor("hello"), "\(node.log)")
        var checkedDoctor = false
        for row in Self.rows {
            let logBefore = node.log.count
            gw.command(["cmd": "refuse", "error": row.error, "times": .number(Double(row.times))])
            _ = gw.waitFor("refuse_set")
            gw.command(["cmd": "close", "code": 1012])
            let newLog = { String(node.log.dropFirst(logBefore)) }
            switch row.then {
            case .retries(let line):
                let hello = gw.waitFor("hello", timeout: 20)
                #expect(hello != nil, "\(row.name): no reconnect\n\(newLog())")
                #expect(newLog().contains(line), "\(row.name): \(newLog())")
                #expect(gw.all("refused").count >= row.times)
            case .pending:
                #expect(waitUntil(timeout: 10) { gatewayState(node)?["state"] == "pendingApproval" || gw.all("refused").count >= row.times },
                        "\(row.name): \(newLog())")
                #expect(gw.waitFor("hello", timeout: 20) != nil, "\(row.name): \(newLog())")
                #expect(newLog().contains("openclaw devices approve req-wait-1") && newLog().contains(Self.hint), "\(row.name): \(newLog())")
            case .pauses(let code, let resume):
                #expect(waitUntil(timeout: 15) { gatewayState(node)?["state"] == "paused" }, "\(row.name): \(newLog())")
                let g = gatewayState(node)
                #expect(g?["detailCode"]?.stringValue == code, "\(row.name): \(g ?? nil)")
                #expect(newLog().contains("reconnect paused for \(gw.url)"), "\(row.name): \(newLog())")
                if code == "PAIRING_REQUIRED" {
                    #expect(g?["requestId"] == "req-pause-1" && g?["remediationHint"]?.stringValue == Self.hint, "\(g ?? nil)")
                    #expect(newLog().contains("openclaw devices approve req-pause-1") && newLog().contains(Self.hint), "\(newLog())")
                    let human = try node.cli(["status"]).stdout
                    #expect(human.contains("Connection:   pending approval (request req-pause-1), reconnect paused:") && human.contains("Request:      req-pause-1")
                            && human.contains("Gateway says: \(Self.hint)"), "\(human)")
                }
                if !checkedDoctor {
                    checkedDoctor = true
                    let doctor = JSONValue.parse(try node.cli(["doctor", "--json"]).stdout)
                    let paused = doctor?["findings"]?.arrayValue?.first { $0["text"]?.stringValue?.contains("paused reconnecting") == true }
                    #expect(paused?["level"] == "FAIL" && paused?["text"]?.stringValue?.contains(code ?? "") == true, "\(doctor ?? nil)")
                }
                // Paused means no further attempt: the gateway's refusals are all used up, so any
                // attempt would connect; none does until the resume below.
                let hellos = gw.all("hello").count
                #expect(gatewayState(node)?["state"] == "paused")
                #expect(gw.all("hello").count == hellos)
                switch resume {
                case .reconnectCommand:
                    let r = try node.cli(["reconnect"])
                    #expect(r.code == 0 && r.stdout.contains("resumed the paused node session"), "\(r.stdout)\(r.stderr)")
                case .sighup:
                    kill(try #require(node.process?.pid), SIGHUP)
                }
                #expect(gw.waitFor("hello", timeout: 20) != nil, "\(row.name): no reconnect after the resume\n\(newLog())")
                #expect(newLog().contains("resuming the paused reconnect"), "\(row.name): \(newLog())")
            }
            #expect(waitUntil(timeout: 10) { gatewayState(node)?["state"] == "connected" }, "\(row.name): \(newLog())")
        }
        #expect(gw.schemaErrors.isEmpty, "\(gw.schemaErrors)")
        #expect(node.isRunning)
    }

    /// A newest gateway keeps the refused socket open and pushes the operator's decision on it:
    /// the paused node resumes on node.pair.resolved, by itself.
    @Test func pausedPairingResumesOnNodePairResolved() throws {
        let (gw, node) = try Self.started(["--pairing-wait"])
        defer { node.cleanup(); gw.stop() }
        let asked = try #require(gw.waitFor("waiting_for_decision"), "\(node.log)")
        let requestId = try #require(asked["requestId"]?.stringValue)
        #expect(waitUntil(timeout: 10) { gatewayState(node)?["state"] == "paused" }, "\(node.log)")
        #expect(gatewayState(node)?["requestId"]?.stringValue == requestId)
        #expect(gatewayState(node)?["remediationHint"]?.stringValue == Self.hint)
        #expect(gw.all("connect").count == 1)
        gw.command(["cmd": "approve", "requestId": .string(requestId)])
        let sent = try #require(gw.waitFor("pair_resolved_sent"))
        #expect(sent["waiting"] == true)
        let hello = try #require(gw.waitFor("hello", timeout: 20), "\(node.log)")
        #expect(hello["issuedToken"] == true)
        #expect(node.log.contains("the gateway reports the pairing request \(requestId) approved"), "\(node.log)")
        #expect(gw.schemaErrors.isEmpty, "\(gw.schemaErrors)")
    }

    /// A local pause rule: a challenge without a nonce is a protocol fault no retry fixes. The
    /// node pauses, and `openclaw-node reconnect` makes exactly one new attempt (paused again).
    @Test func malformedChallengePausesUntilReconnect() throws {
        let (gw, node) = try Self.started(["--challenge-without-nonce"])
        defer { node.cleanup(); gw.stop() }
        #expect(waitUntil(timeout: 10) { gatewayState(node)?["state"] == "paused" }, "\(node.log)")
        #expect(gatewayState(node)?["pauseKind"] == "protocol")
        #expect(node.log.contains("does not speak the protocol as expected"), "\(node.log)")
        _ = try #require(gw.waitFor("disconnect"))
        let r = try node.cli(["reconnect"])
        #expect(r.code == 0 && r.stdout.contains("resumed the paused node session"), "\(r.stdout)\(r.stderr)")
        _ = try #require(gw.waitFor("disconnect", timeout: 20), "\(node.log)")
        #expect(waitUntil(timeout: 10) { gatewayState(node)?["state"] == "paused" }, "\(node.log)")
        #expect(gw.all("disconnect").count == 2)
    }

    /// A TLS pin mismatch pauses (configuration); `openclaw-node reconnect` tries once more and the
    /// same certificate pauses it again.
    @Test func pinMismatchPausesUntilReconnect() throws {
        let cert = try TestCertificate(); defer { cert.remove() }
        let (gw, node) = try Self.started(["--auto-approve", "--cert", cert.certPath, "--key", cert.keyPath], extraGateway: "tlsFingerprint: 'sha256:\(String(repeating: "00", count: 32))'")
        defer { node.cleanup(); gw.stop() }
        #expect(waitUntil(timeout: 15) { gatewayState(node)?["state"] == "paused" }, "\(node.log)")
        #expect(gatewayState(node)?["pauseKind"] == "configuration")
        let pauses = { node.log.components(separatedBy: "reconnect paused for").count - 1 }
        #expect(pauses() == 1)
        #expect(try node.cli(["reconnect"]).code == 0)
        #expect(waitUntil(timeout: 15) { pauses() == 2 }, "\(node.log)")
        #expect(gatewayState(node)?["state"] == "paused")
        #expect(gw.all("connect").isEmpty)
    }

    /// A rejection on the waiting socket keeps the node paused and says so.
    @Test func rejectedPairingStaysPaused() throws {
        let (gw, node) = try Self.started(["--pairing-wait"])
        defer { node.cleanup(); gw.stop() }
        let requestId = try #require(gw.waitFor("waiting_for_decision")?["requestId"]?.stringValue, "\(node.log)")
        #expect(waitUntil(timeout: 10) { gatewayState(node)?["state"] == "paused" }, "\(node.log)")
        gw.command(["cmd": "reject", "requestId": .string(requestId)])
        #expect(waitUntil(timeout: 10) { gatewayState(node)?["reason"]?.stringValue?.contains("rejected") == true }, "\(node.log)")
        #expect(gatewayState(node)?["state"] == "paused")
        #expect(gw.all("connect").count == 1)
    }
}
