@testable import GatewaySession
@testable import Kit
@testable import Support
@testable import TestSupport
import Testing

/// The reconnect decision (docs/PROTOCOL.md §3.8), one row per rule, in the rules' order.
@Suite struct ReconnectPolicyTests {
    typealias Action = ReconnectPolicy.Action

    static func refusal(_ code: String = "INVALID_REQUEST", details: JSONValue? = nil, retryable: Bool? = nil,
                        retryAfterMs: Int? = nil) -> ConnectFailure {
        var o: [String: JSONValue] = ["code": .string(code), "message": "refused"]
        if let details { o["details"] = details }
        if let retryable { o["retryable"] = .bool(retryable) }
        if let retryAfterMs { o["retryAfterMs"] = .number(Double(retryAfterMs)) }
        return .gateway(GatewayProtocol.GatewayError(.object(o)))
    }

    static let second = Duration.seconds(1)
    static let backoff = Action.retry(after: .seconds(1), fromGateway: false)
    static func auth(_ c: String) -> Action { .pause(.authentication(detailCode: c)) }

    /// (row, failure, stored device token usable, expected action of a fresh policy)
    static let rows: [(String, ConnectFailure, Bool, Action)] = [
        ("1 a failed request other than connect keeps the session", .sessionRequest(method: "node.event"), true, .keepSession),
        ("2 AUTH_TOKEN_MISMATCH with a stored token: one retry after 250 ms",
         refusal(details: ["code": "AUTH_TOKEN_MISMATCH"]), true, .retryWithStoredDeviceToken(after: .milliseconds(250))),
        ("2 retry_with_device_token hint with a stored token",
         refusal("UNAUTHORIZED", details: ["code": "AUTH_UNAUTHORIZED", "recommendedNextStep": "retry_with_device_token"]), true,
         .retryWithStoredDeviceToken(after: .milliseconds(250))),
        ("2 without a usable stored token AUTH_TOKEN_MISMATCH pauses", refusal(details: ["code": "AUTH_TOKEN_MISMATCH"]), false,
         auth("AUTH_TOKEN_MISMATCH")),
        ("3 bare PAIRING_REQUIRED pauses", refusal("NOT_PAIRED", details: ["code": "PAIRING_REQUIRED", "requestId": "pair-1"]), false,
         .pause(.pairing(PairingRequest(["requestId": "pair-1"])))),
        ("3 legacy NOT_PAIRED without details.code pauses", refusal("NOT_PAIRED", details: ["requestId": "pair-legacy"]), false,
         .pause(.pairing(PairingRequest(["requestId": "pair-legacy"])))),
        ("3 PAIRING_REQUIRED with pauseReconnect:false backs off",
         refusal("NOT_PAIRED", details: ["code": "PAIRING_REQUIRED", "pauseReconnect": false], retryable: false), false, backoff),
        ("3 PAIRING_REQUIRED with wait_then_retry backs off",
         refusal("NOT_PAIRED", details: ["code": "PAIRING_REQUIRED", "recommendedNextStep": "wait_then_retry"]), false, backoff),
        ("3 PAIRING_REQUIRED waiting honours retryAfterMs",
         refusal("NOT_PAIRED", details: ["code": "PAIRING_REQUIRED", "pauseReconnect": false], retryAfterMs: 2_000), false,
         .retry(after: .seconds(2), fromGateway: true)),
        ("3 PROTOCOL_MISMATCH pauses", refusal(details: ["code": "PROTOCOL_MISMATCH", "expectedProtocol": 5]), false,
         .pause(.protocolMismatch(detailCode: "PROTOCOL_MISMATCH"))),
        ("3 CLIENT_VERSION_MISMATCH pauses", refusal(details: ["code": "CLIENT_VERSION_MISMATCH"]), false,
         .pause(.protocolMismatch(detailCode: "CLIENT_VERSION_MISMATCH"))),
        ("3 retryable:false pauses an unknown code", refusal("NEW_GATEWAY_ERROR", retryable: false), false, auth("NEW_GATEWAY_ERROR")),
        ("3 pauseReconnect:true pauses", refusal("NEW_GATEWAY_ERROR", details: ["code": "NEW_TERMINAL", "pauseReconnect": true]), false,
         auth("NEW_TERMINAL")),
        ("3 AUTH_RATE_LIMITED pauses despite wait_then_retry",
         refusal(details: ["code": "AUTH_RATE_LIMITED", "recommendedNextStep": "wait_then_retry"], retryAfterMs: 500), false,
         auth("AUTH_RATE_LIMITED")),
        ("3 wait_then_retry backs off", refusal("UNAVAILABLE", details: ["recommendedNextStep": "wait_then_retry"]), false, backoff),
        ("3 update_auth_configuration pauses", refusal("UNAUTHORIZED", details: ["recommendedNextStep": "update_auth_configuration"]), false,
         auth("UNAUTHORIZED")),
        ("3 update_auth_credentials pauses", refusal("UNAUTHORIZED", details: ["recommendedNextStep": " update_auth_credentials "]), false,
         auth("UNAUTHORIZED")),
        ("3 review_auth_configuration pauses", refusal("UNAUTHORIZED", details: ["recommendedNextStep": "review_auth_configuration"]), false,
         auth("UNAUTHORIZED")),
        ("3 retry_with_device_token without a token pauses",
         refusal("UNAUTHORIZED", details: ["recommendedNextStep": "retry_with_device_token"]), false, auth("UNAUTHORIZED")),
        ("3 a TLS pin mismatch pauses", .configuration("Gateway TLS certificate fingerprint mismatch"), false,
         .pause(.configuration("Gateway TLS certificate fingerprint mismatch"))),
        ("3 a malformed challenge pauses", .malformed("connect.challenge without a nonce"), false, .pause(.protocolMismatch(detailCode: nil))),
        ("4 retryAfterMs is honoured", refusal("UNAVAILABLE", retryable: true, retryAfterMs: 750), false,
         .retry(after: .milliseconds(750), fromGateway: true)),
        ("4 retryAfterMs is capped at 30 s", refusal("UNAVAILABLE", retryAfterMs: 600_000), false, .retry(after: .seconds(30), fromGateway: true)),
        ("5 a transport error backs off", .transport("connection refused"), true, backoff),
        ("5 an unknown gateway error backs off", refusal("UNAVAILABLE", details: ["code": "DEVICE_AUTH_SIGNATURE_EXPIRED"]), false, backoff),
        ("5 a blank details.code falls back to error.code", refusal("AUTH_TOKEN_MISSING", details: ["code": "  "]), false,
         auth("AUTH_TOKEN_MISSING")),
    ] + ReconnectPolicy.authPauseCodes.sorted().map { code in
        ("3 \(code) pauses", refusal(details: ["code": .string(code)]), false, auth(code))
    }

    @Test(arguments: rows.indices) func row(_ i: Int) {
        let (name, failure, token, expected) = Self.rows[i]
        var p = ReconnectPolicy()
        #expect(p.afterFailure(failure, storedDeviceToken: token) == expected, "\(name)")
    }

    @Test func backoffDoublesToThirtySecondsAndResetsOnConnect() {
        var p = ReconnectPolicy()
        let delays = (0..<8).map { _ -> Duration in
            guard case .retry(let d, false) = p.afterFailure(.transport("x"), storedDeviceToken: false) else { return .zero }
            return d
        }
        #expect(delays == [1, 2, 4, 8, 16, 30, 30, 30].map { Duration.seconds($0) })
        // The gateway's retryAfterMs does not advance the backoff.
        _ = p.afterFailure(Self.refusal(retryAfterMs: 10), storedDeviceToken: false)
        p.connected()
        #expect(p.afterFailure(.transport("x"), storedDeviceToken: false) == Self.backoff)
        var short = ReconnectPolicy(initial: .milliseconds(100), maximum: .milliseconds(400))
        let small = (0..<4).map { _ in short.afterFailure(.transport("x"), storedDeviceToken: false) }
        #expect(small == [100, 200, 400, 400].map { Action.retry(after: .milliseconds($0), fromGateway: false) })
        #expect(short.afterFailure(Self.refusal(retryAfterMs: 5_000), storedDeviceToken: false) == .retry(after: .milliseconds(400), fromGateway: true))
    }

    @Test func theDeviceTokenRetryIsUsedOnceUntilTheNextConnect() {
        var p = ReconnectPolicy()
        let mismatch = Self.refusal(details: ["code": "AUTH_TOKEN_MISMATCH"])
        #expect(p.afterFailure(mismatch, storedDeviceToken: true) == .retryWithStoredDeviceToken(after: .milliseconds(250)))
        #expect(p.afterFailure(mismatch, storedDeviceToken: true) == Self.auth("AUTH_TOKEN_MISMATCH"))
        p.connected()
        #expect(p.afterFailure(mismatch, storedDeviceToken: true) == .retryWithStoredDeviceToken(after: .milliseconds(250)))
    }

    @Test func environmentKnobs() {
        let p = ReconnectPolicy.fromEnvironment(["OPENCLAW_NODE_RECONNECT_INITIAL_MS": "50", "OPENCLAW_NODE_RECONNECT_MAX_MS": "200"])
        #expect(p.initialDelay == .milliseconds(50) && p.maximumDelay == .milliseconds(200))
        let d = ReconnectPolicy.fromEnvironment(["OPENCLAW_NODE_RECONNECT_INITIAL_MS": "-1"])
        #expect(d.initialDelay == .seconds(1) && d.maximumDelay == .seconds(30))
    }

    @Test func pairingDetailsAreSanitized() {
        let r = PairingRequest(["reason": " role-upgrade ", "requestId": "pair-1;echo unsafe", "remediationHint": .string(String(repeating: "h", count: 300)),
                                "requestedScopes": [" ", 7], "approvedRoles": ["node"], "deviceId": "  "])
        #expect(r.reason == .roleUpgrade && r.requestId == nil && r.remediationHint?.count == 240)
        #expect(r.requestedScopes == nil && r.approvedRoles == ["node"] && r.deviceId == nil)
        #expect(PairingRequest(["requestId": "A1.b_c:d-e"]).requestId == "A1.b_c:d-e")
        #expect(PairingRequest(["requestId": .string(String(repeating: "a", count: 129))]).requestId == nil)
        #expect(PairingRequest(["reason": "something-new"]).reason == nil)
    }

    @Test func attemptFallbacksAndAdvice() {
        func e(_ code: String) -> GatewayProtocol.GatewayError {
            GatewayProtocol.GatewayError(["code": "INVALID_REQUEST", "message": "m", "details": ["code": .string(code)]])
        }
        #expect(AuthFailurePolicy.fallback(e("DEVICE_AUTH_SIGNATURE_INVALID"), signatureVersion: .v3, usedDeviceToken: false) == .retryWithV2Signature)
        #expect(AuthFailurePolicy.fallback(e("DEVICE_AUTH_SIGNATURE_INVALID"), signatureVersion: .v2, usedDeviceToken: false) == nil)
        #expect(AuthFailurePolicy.fallback(e("AUTH_DEVICE_TOKEN_MISMATCH"), signatureVersion: .v3, usedDeviceToken: true) == .dropDeviceToken)
        #expect(AuthFailurePolicy.fallback(e("AUTH_DEVICE_TOKEN_MISMATCH"), signatureVersion: .v3, usedDeviceToken: false) == nil)
        for code in ReconnectPolicy.authPauseCodes.sorted() + ["PROTOCOL_MISMATCH", "DEVICE_AUTH_SIGNATURE_EXPIRED"] {
            #expect(AuthFailurePolicy.advice(e(code)) != nil, "\(code)")
        }
    }
}
