import Kit
import Support

/// A refused `connect`, before and after the reconnect decision (ReconnectPolicy):
/// `fallback` is what the same attempt still tries at once (another signature version, the
/// configured credential instead of a rejected device token); `advice` is what the log and
/// `status` tell a person to do about the refusal (docs/PROTOCOL.md §2.7, §3.8).
enum AuthFailurePolicy {
    enum Fallback: Equatable {
        /// The gateway could not verify a v3 signature: sign v2 and try again at once.
        case retryWithV2Signature
        /// The stored device token is no longer valid: forget it, retry with the configured
        /// credential at once (as the Rust host drops an adopted token it had issued).
        case dropDeviceToken
    }

    static func fallback(_ e: GatewayProtocol.GatewayError, signatureVersion: DeviceAuthPayload.Version,
                         usedDeviceToken: Bool) -> Fallback? {
        switch ConnectErrorDetails.detailCode(e) {
        case "DEVICE_AUTH_SIGNATURE_INVALID" where signatureVersion == .v3: return .retryWithV2Signature
        case "AUTH_DEVICE_TOKEN_MISMATCH" where usedDeviceToken: return .dropDeviceToken
        default: return nil
        }
    }

    /// What to change, for the refusals a person can do something about; nil for the others.
    static func advice(_ e: GatewayProtocol.GatewayError) -> String? {
        let code = ConnectErrorDetails.detailCode(e)
        switch code {
        case "DEVICE_AUTH_SIGNATURE_INVALID":
            return "the gateway rejects this node's device signature (v3 and v2); this node and gateway versions may not work together"
        case "AUTH_DEVICE_TOKEN_MISMATCH":
            return "the gateway no longer accepts this device's token; approve the device again (openclaw devices list)"
        case "AUTH_TOKEN_MISMATCH":
            return "the gateway rejected the shared token: set the right one in gateway.token (or OPENCLAW_GATEWAY_TOKEN)"
        case "AUTH_TOKEN_MISSING":
            return "the gateway requires a token: set gateway.token (or OPENCLAW_GATEWAY_TOKEN), or pair with a setup code (`openclaw-node pair <code>`)"
        case "AUTH_TOKEN_NOT_CONFIGURED":
            return "the gateway has no token configured for this kind of login: configure gateway auth on the gateway, or use a setup code"
        case "AUTH_BOOTSTRAP_TOKEN_INVALID":
            return "the setup code is expired or already used: create a new one (`openclaw qr`) and pair again"
        case "AUTH_RATE_LIMITED":
            return "the gateway is rate-limiting this device's logins; wait, then run `openclaw-node reconnect`"
        case "AUTH_SCOPE_MISMATCH":
            return "the gateway refused the scopes this session asked for; review the device's approval (openclaw devices list)"
        case "DEVICE_IDENTITY_REQUIRED", "CONTROL_UI_DEVICE_IDENTITY_REQUIRED":
            return "the gateway requires a device identity it did not get; check this node's state database (`openclaw-node status`)"
        case "DEVICE_AUTH_SIGNATURE_EXPIRED":
            return "the gateway says the signature is too old: this device's clock is more than 2 minutes off (check `timedatectl`, enable NTP)"
        case "DEVICE_AUTH_DEVICE_ID_MISMATCH", "DEVICE_AUTH_PUBLIC_KEY_INVALID":
            return "the gateway rejected this device's identity (\(code)); the state database may be damaged — see `openclaw-node status`"
        case "PROTOCOL_MISMATCH", "CLIENT_VERSION_MISMATCH":
            let expected = e.details?["expectedProtocol"]?.intValue.map(String.init) ?? "?"
            return "the gateway speaks protocol \(expected) and this node \(GatewayProtocol.minProtocol)–\(GatewayProtocol.maxProtocol): upgrade the older side"
        default:
            if code.hasPrefix("AUTH_PASSWORD") {
                return "the gateway rejected the password (\(code)): check gateway.password (or OPENCLAW_GATEWAY_PASSWORD)"
            }
            return nil
        }
    }
}
