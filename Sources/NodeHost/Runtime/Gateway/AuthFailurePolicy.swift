import Config
import HostPresence
import Kit
import Store
import Support

/// What to do when the gateway refuses `connect` (docs/PROTOCOL.md §2.7, §3.1, §3.7).
enum AuthFailurePolicy {
    enum Action: Equatable {
        /// Waiting for an operator to approve this device.
        case pendingApproval(requestId: String?)
        /// The gateway could not verify a v3 signature: sign v2 and try again at once.
        case retryWithV2Signature
        /// The stored device token is no longer valid: forget it, retry with the configured credential.
        case dropDeviceToken
        /// Try again later (after `retryAfterMs` if given, else the backoff).
        case retry(afterMs: Int?)
        /// Retrying cannot help; the message says what to change.
        case stop(String)
    }

    static func decide(_ e: GatewayProtocol.GatewayError, signatureVersion: DeviceAuthPayload.Version,
                       usedDeviceToken: Bool) -> Action {
        let code = e.specificCode
        switch code {
        case "PAIRING_REQUIRED", "NOT_PAIRED":
            return .pendingApproval(requestId: e.details?["requestId"]?.stringValue)
        case "DEVICE_AUTH_SIGNATURE_INVALID":
            return signatureVersion == .v3 ? .retryWithV2Signature
                : .stop("the gateway rejects this node's device signature (v3 and v2); this node and gateway versions may not work together")
        case "AUTH_DEVICE_TOKEN_MISMATCH":
            return usedDeviceToken ? .dropDeviceToken
                : .stop("the gateway no longer accepts this device's token; approve the device again (openclaw devices list)")
        case "AUTH_TOKEN_MISMATCH":
            return .stop("the gateway rejected the shared token: set the right one in gateway.token (or OPENCLAW_GATEWAY_TOKEN)")
        case "AUTH_TOKEN_MISSING":
            return .stop("the gateway requires a token: set gateway.token (or OPENCLAW_GATEWAY_TOKEN), or use a setup code (gateway.setupCode from `openclaw qr`)")
        case "AUTH_TOKEN_NOT_CONFIGURED":
            return .stop("the gateway has no token configured for this kind of login: configure gateway auth on the gateway, or use a setup code")
        case "AUTH_BOOTSTRAP_TOKEN_INVALID":
            return .stop("the setup code is expired or already used: create a new one with `openclaw qr` and set gateway.setupCode")
        case "DEVICE_AUTH_SIGNATURE_EXPIRED":
            return .stop("the gateway says the signature is too old: this device's clock is more than 2 minutes off (check `timedatectl`, enable NTP)")
        case "DEVICE_AUTH_DEVICE_ID_MISMATCH", "DEVICE_AUTH_PUBLIC_KEY_INVALID":
            return .stop("the gateway rejected this device's identity (\(code)); the state database may be damaged — see `openclaw-node status`")
        case "PROTOCOL_MISMATCH":
            let expected = e.details?["expectedProtocol"]?.intValue.map(String.init) ?? "?"
            return .stop("the gateway speaks protocol \(expected) and this node \(GatewayProtocol.minProtocol)–\(GatewayProtocol.maxProtocol): upgrade the older side")
        case "AUTH_RATE_LIMITED":
            // Windows stops here; a daemon that stops for good would need a manual restart after
            // a passing rate limit, so wait long instead.
            return .retry(afterMs: e.retryAfterMs ?? 60_000)
        default:
            if code.hasPrefix("AUTH_PASSWORD") {
                return .stop("the gateway rejected the password (\(code)): check gateway.password (or OPENCLAW_GATEWAY_PASSWORD)")
            }
            return .retry(afterMs: e.retryAfterMs)
        }
    }
}
