import Config
import Support

/// Whether a capability can serve commands on this device right now.
public enum Availability: Sendable, Equatable {
    case available
    /// Not usable here; the reason is logged and shown by `caps`/doctor instead of advertising it.
    case unavailable(String)
}

/// What a handler gets besides its params.
public struct InvocationContext: Sendable {
    public let invokeId: String
    public let command: String
    /// When the caller stops waiting (nil = no deadline). Handlers that block should honour
    /// Task cancellation; the dispatcher cancels at this point.
    public let deadline: ContinuousClock.Instant?
    /// Largest JSON payload the current transport accepts (gateway `policy.maxPayload`).
    public let maxPayloadBytes: Int

    public init(invokeId: String, command: String, deadline: ContinuousClock.Instant?, maxPayloadBytes: Int) {
        self.invokeId = invokeId; self.command = command; self.deadline = deadline
        self.maxPayloadBytes = maxPayloadBytes
    }
}

/// A bundle of commands (device, camera, location, …) loaded through the registry.
public protocol Capability: Sendable {
    /// The `caps` name and config section ("camera").
    var name: String { get }
    /// Where it came from, for log lines about it ("bundle libopenclaw-camera.so", "plugin sensors in …").
    var origin: String { get }
    /// The rows of the command table this capability contributes, each with its typed handler
    /// (read once, when the registry loads the capability).
    var commands: [CommandSpec] { get }
    /// Whether this device can serve the capability (a camera exists, the address is valid, …).
    /// Asked by every process that builds a registry, `caps` and `doctor` included, so it is a
    /// question only: it opens no session, starts no thread or child process. Commands of
    /// unavailable capabilities are not advertised.
    func availability() async -> Availability
    /// Node events the capability wants sent to the gateway (location.update, agent.request from
    /// the canvas, …); nil when it has none. The daemon forwards them while connected.
    func events() async -> AsyncStream<CapabilityEvent>?
    /// The daemon's start (never for one-shot CLI commands), after `availability()` said yes and
    /// before the manifest is sent: background work the capability runs while the daemon lives
    /// (location's gpsd watch, a plugin's process, the canvas kiosk window). Returns `.unavailable`
    /// when that work cannot start, so the capability is not advertised. One-shot commands start
    /// what one invoke needs inside `invoke`.
    func start() async -> Availability
    /// Called after every hello-ok in the daemon (canvas: host URL, A2UI on connect).
    func gatewayConnected(_ link: GatewayLink) async
    /// Called when such a session ends (computer: release held keys and buttons).
    func gatewayDisconnected() async
    /// Gateway event names this capability wants (`chat` for spoken replies); none by default.
    var gatewayEvents: Set<String> { get }
    /// One such event, as the gateway sent it (daemon only).
    func gatewayEvent(_ name: String, _ payload: JSONValue) async
    /// Caps advertised besides `name` while the capability is advertised (talk: "voiceWake").
    var extraCaps: [String] { get }
    /// Whether the daemon should also keep an operator session to the gateway for this capability
    /// (talk: chat.send and talk.speak, which a node session may not call); reached through
    /// `GatewayLink.operatorSession`.
    var operatorSessionUse: OperatorSessionUse { get }
    /// Whether someone is at the device, at the daemon's start and on every change (daemon only).
    func presenceChanged(foreground: Bool) async
    /// Releases devices/processes (SIGTERM path).
    func shutdown() async
    /// `openclaw-node doctor`'s checks beyond `availability()`: what the capability assumes at run
    /// time (device permissions, a service answering, a display for window mode), each saying what
    /// to do when it fails. Asked only for enabled capabilities; may probe, must not start anything.
    func diagnose() async -> [Diagnosis]
}

/// One line of `openclaw-node doctor` about a capability.
public struct Diagnosis: Sendable, Equatable {
    public enum Level: String, Sendable { case ok, warn, fail }
    public let level: Level
    public let text: String
    public init(_ level: Level, _ text: String) { self.level = level; self.text = text }
}

/// What a capability learns about one gateway session.
public struct GatewayLink: Sendable {
    /// `hello-ok.canvasHostUrl` (older gateways, capability-scoped).
    public let canvasHostUrl: String?
    /// `hello-ok.pluginSurfaceUrls` (newer gateways: "canvas").
    public let pluginSurfaceUrls: [String: String]
    /// `hello-ok.snapshot.sessionDefaults.mainSessionKey`.
    public let mainSessionKey: String?
    public let nodeId: String
    public let displayName: String
    /// Sends a node event now; false when not connected or not accepted (never held for later).
    public let sendEvent: @Sendable (String, JSONValue) async -> Bool
    /// Whether the node is connected right now (this session or a later one).
    public let isConnected: @Sendable () async -> Bool
    /// Calls a gateway method (node.canvas.capability.refresh, …); nil when offline or refused.
    public let request: @Sendable (String, JSONValue) async -> JSONValue?
    /// The operator session, when the daemon keeps one (see `Capability.wantsOperatorSession`).
    public let operatorSession: OperatorSession

    public init(canvasHostUrl: String?, pluginSurfaceUrls: [String: String], mainSessionKey: String?,
                nodeId: String, displayName: String, isConnected: @escaping @Sendable () async -> Bool,
                request: @escaping @Sendable (String, JSONValue) async -> JSONValue? = { _, _ in nil },
                operatorSession: OperatorSession = .none,
                sendEvent: @escaping @Sendable (String, JSONValue) async -> Bool) {
        self.canvasHostUrl = canvasHostUrl; self.pluginSurfaceUrls = pluginSurfaceUrls
        self.mainSessionKey = mainSessionKey; self.nodeId = nodeId; self.displayName = displayName
        self.isConnected = isConnected; self.request = request; self.operatorSession = operatorSession; self.sendEvent = sendEvent
    }
}

/// When a capability wants the operator session.
public enum OperatorSessionUse: Sendable, Comparable {
    case none
    /// When the device already holds an operator token for the gateway (a setup code handed one over).
    case whenTokenHeld
    /// Always: without a token the session asks the gateway to approve the device as an operator.
    case always
}

/// The daemon's second, `role: "operator"` connection (same device key), for the methods a node
/// session may not call. Calls go to whichever operator session is live when they are made.
public struct OperatorSession: Sendable {
    /// Whether an operator session is connected right now.
    public let isConnected: @Sendable () async -> Bool
    /// Calls a method on it: the reply payload, or the gateway's error (code UNAVAILABLE when
    /// there is no operator session).
    public let call: @Sendable (_ method: String, _ params: JSONValue, _ timeout: Duration) async -> Result<JSONValue, GatewayCallError>

    public init(isConnected: @escaping @Sendable () async -> Bool,
                call: @escaping @Sendable (String, JSONValue, Duration) async -> Result<JSONValue, GatewayCallError>) {
        self.isConnected = isConnected; self.call = call
    }

    public static let none = OperatorSession(isConnected: { false }) { _, _, _ in
        .failure(GatewayCallError(code: "UNAVAILABLE", message: "no operator session", details: nil))
    }
}

/// An error reply from the gateway: `{code, message, details?}`.
public struct GatewayCallError: Error, Sendable, CustomStringConvertible {
    public let code: String
    public let message: String
    public let details: JSONValue?
    public init(code: String, message: String, details: JSONValue?) { self.code = code; self.message = message; self.details = details }
    public var description: String { "\(details?["code"]?.stringValue ?? code): \(message)" }
}

/// One `node.event` a capability emits.
public struct CapabilityEvent: Sendable, Equatable {
    public let event: String
    public let payload: JSONValue
    public init(event: String, payload: JSONValue) { self.event = event; self.payload = payload }
}

extension Capability {
    public func events() async -> AsyncStream<CapabilityEvent>? { nil }
    public func gatewayConnected(_ link: GatewayLink) async {}
    public func gatewayDisconnected() async {}
    public var gatewayEvents: Set<String> { [] }
    public func gatewayEvent(_ name: String, _ payload: JSONValue) async {}
    public var extraCaps: [String] { [] }
    public var operatorSessionUse: OperatorSessionUse { .none }
    public func presenceChanged(foreground: Bool) async {}
    public func start() async -> Availability { .available }
    public func shutdown() async {}
    public func diagnose() async -> [Diagnosis] { [] }
    public var origin: String { "bundle libopenclaw-\(name).so" }
}
