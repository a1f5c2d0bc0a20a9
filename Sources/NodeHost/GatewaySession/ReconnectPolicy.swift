import Kit
import Support

/// What ended a connect attempt, as far as the reconnect decision cares.
enum ConnectFailure: Sendable, Equatable {
    /// The gateway answered a request other than `connect` with an error: the session is fine.
    case sessionRequest(method: String)
    /// `connect` refused by the gateway.
    case gateway(GatewayProtocol.GatewayError)
    /// A local condition no retry can fix: an insecure URL, a TLS pin mismatch, a fingerprint
    /// configured for a ws:// URL.
    case configuration(String)
    /// The gateway sent a challenge or reply that is not what the protocol says.
    case malformed(String)
    /// Unreachable, TLS handshake failure, timeout, socket closed.
    case transport(String)
}

/// Why reconnecting stopped until someone acts (approves, fixes the config, runs
/// `openclaw-node reconnect`).
enum ReconnectPause: Sendable, Equatable {
    case pairing(PairingRequest)
    case authentication(detailCode: String)
    case protocolMismatch(detailCode: String?)
    case configuration(String)

    var detailCode: String? {
        switch self {
        case .pairing: return "PAIRING_REQUIRED"
        case .authentication(let c): return c
        case .protocolMismatch(let c): return c
        case .configuration: return nil
        }
    }
}

/// The reconnect decision (docs/PROTOCOL.md §3.8), as OpenClaw's Rust node host takes it: a
/// pure function of the failure, whether a stored device token may be retried, and this
/// policy's own state (the next backoff delay, whether the one device-token retry was used).
/// It sleeps nowhere; GatewayClient carries the action out.
struct ReconnectPolicy: Sendable {
    enum Action: Sendable, Equatable {
        case keepSession
        case retryWithStoredDeviceToken(after: Duration)
        case pause(ReconnectPause)
        /// `fromGateway`: the delay is the gateway's `retryAfterMs` (capped), not the backoff.
        case retry(after: Duration, fromGateway: Bool)
    }

    static let deviceTokenRetryDelay = Duration.milliseconds(250)
    static let defaultInitial = Duration.seconds(1)
    static let defaultMaximum = Duration.seconds(30)

    let initialDelay: Duration
    let maximumDelay: Duration
    private(set) var nextDelay: Duration
    private(set) var deviceTokenRetryUsed = false

    init(initial: Duration = defaultInitial, maximum: Duration = defaultMaximum) {
        initialDelay = initial
        maximumDelay = max(maximum, initial)
        nextDelay = initial
    }

    /// The daemon's policy: 1 s → 30 s, or what OPENCLAW_NODE_RECONNECT_INITIAL_MS and
    /// OPENCLAW_NODE_RECONNECT_MAX_MS say (tests use a few hundred milliseconds).
    static func fromEnvironment(_ env: [String: String] = ProcessEnvironment.current) -> ReconnectPolicy {
        func ms(_ key: String) -> Duration? { env[key].flatMap { Int($0) }.flatMap { $0 > 0 ? .milliseconds($0) : nil } }
        return ReconnectPolicy(initial: ms("OPENCLAW_NODE_RECONNECT_INITIAL_MS") ?? defaultInitial,
                               maximum: ms("OPENCLAW_NODE_RECONNECT_MAX_MS") ?? defaultMaximum)
    }

    /// `storedDeviceToken`: a device token is stored for this gateway and the endpoint is trusted
    /// (loopback, or TLS-authenticated), so sending it once more cannot leak it to an impostor.
    mutating func afterFailure(_ failure: ConnectFailure, storedDeviceToken: Bool) -> Action {
        if case .sessionRequest = failure { return .keepSession }
        if case .gateway(let e) = failure, !deviceTokenRetryUsed, storedDeviceToken, Self.asksForDeviceToken(e) {
            deviceTokenRetryUsed = true
            return .retryWithStoredDeviceToken(after: Self.deviceTokenRetryDelay)
        }
        if let pause = Self.pause(for: failure) { return .pause(pause) }
        if case .gateway(let e) = failure, let ms = e.retryAfterMs, ms >= 0 {
            return .retry(after: min(.milliseconds(ms), maximumDelay), fromGateway: true)
        }
        let delay = nextDelay
        nextDelay = min(nextDelay * 2, maximumDelay)
        return .retry(after: delay, fromGateway: false)
    }

    /// A successful connect: the backoff starts over and the device-token retry is available again.
    mutating func connected() {
        nextDelay = initialDelay
        deviceTokenRetryUsed = false
    }

    /// The network came back or the system resumed: the next wait is the shortest again.
    mutating func resetBackoff() { nextDelay = initialDelay }

    static func asksForDeviceToken(_ e: GatewayProtocol.GatewayError) -> Bool {
        ConnectErrorDetails.detailCode(e) == "AUTH_TOKEN_MISMATCH"
            || ConnectErrorDetails(e.details).recommendedNextStep == .retryWithDeviceToken
    }

    static let authPauseCodes: Set<String> = [
        "AUTH_TOKEN_MISSING", "AUTH_TOKEN_NOT_CONFIGURED", "AUTH_BOOTSTRAP_TOKEN_INVALID", "AUTH_PASSWORD_MISSING",
        "AUTH_PASSWORD_MISMATCH", "AUTH_PASSWORD_NOT_CONFIGURED", "AUTH_RATE_LIMITED", "AUTH_DEVICE_TOKEN_MISMATCH",
        "AUTH_SCOPE_MISMATCH", "AUTH_TOKEN_MISMATCH", "CONTROL_UI_DEVICE_IDENTITY_REQUIRED", "DEVICE_IDENTITY_REQUIRED",
    ]

    /// The pause conditions, in their order (the first that matches wins).
    static func pause(for failure: ConnectFailure) -> ReconnectPause? {
        switch failure {
        case .sessionRequest, .transport: return nil
        case .configuration(let why): return .configuration(why)
        case .malformed: return .protocolMismatch(detailCode: nil)
        case .gateway(let e):
            let code = ConnectErrorDetails.detailCode(e)
            let details = ConnectErrorDetails(e.details)
            if code == "PAIRING_REQUIRED" {
                // Checked first: for pairing only these two hints matter, not `retryable`.
                if details.pauseReconnect == false || details.recommendedNextStep == .waitThenRetry { return nil }
                return .pairing(PairingRequest(e.details))
            }
            if code == "PROTOCOL_MISMATCH" || code == "CLIENT_VERSION_MISMATCH" { return .protocolMismatch(detailCode: code) }
            if e.retryableFlag == false || details.pauseReconnect == true { return .authentication(detailCode: code) }
            // A rate limit outlives the reconnect loop: pause even when the hint says wait.
            if code == "AUTH_RATE_LIMITED" { return .authentication(detailCode: code) }
            switch details.recommendedNextStep {
            case .waitThenRetry?: return nil
            case .retryWithDeviceToken?, .updateAuthConfiguration?, .updateAuthCredentials?, .reviewAuthConfiguration?:
                return .authentication(detailCode: code)
            case nil: break
            }
            return authPauseCodes.contains(code) ? .authentication(detailCode: code) : nil
        }
    }
}
