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
    /// Progress out and input in while the invoke runs (DuplexChannel); detached when the caller
    /// is not a gateway.
    public let duplex: DuplexChannel

    public init(invokeId: String, command: String, deadline: ContinuousClock.Instant?, maxPayloadBytes: Int,
                duplex: DuplexChannel = .detached()) {
        self.invokeId = invokeId; self.command = command; self.deadline = deadline
        self.maxPayloadBytes = maxPayloadBytes; self.duplex = duplex
    }

    /// Whether the invoke was cancelled (`node.invoke.cancel`, its deadline, its caller gone, the
    /// node stopping): the handler's task is, and every wait of the node's that it is in ends.
    public var isCancelled: Bool { Task.isCancelled }
}

/// A capability (the built-in device one, a bundle's, a plugin's) as the registry loads it. What it
/// is — name, config section, command rows and gates — is its manifest; the capability adds only the
/// code: a handler per row and whether the device can serve it. Everything else is opt-in, one small
/// protocol per role (`CapabilityLifecycle`, `EventSource`, `GatewaySessionAware`, `PresenceAware`,
/// `SelfDiagnosing`, `AdvertisesExtraCaps`, `ControlQueryable`), so a capability states what it takes part in.
public protocol Capability: Sendable {
    /// Its description (for a bundle, the one read beside its library and handed over in
    /// `CapabilityContext.manifest`).
    var manifest: BundleManifest { get }
    /// The code half of its command rows, one per manifest row, matched by name.
    var handlers: [CommandHandler] { get }
    /// Whether this device can serve the capability (a camera exists, the address is valid, …).
    /// Asked by every process that builds a registry, `caps` and `doctor` included, so it is a
    /// question only: it opens no session, starts no thread or child process. Commands of
    /// unavailable capabilities are not advertised.
    func availability() async -> Availability
    /// Where it came from, for log lines about it ("bundle libopenclaw-camera.so", "plugin sensors in …").
    var origin: String { get }
}

extension Capability {
    /// The `caps` name and config section ("camera").
    public var name: String { manifest.name }
    public var origin: String { manifest.library.map { "bundle \($0)" } ?? "built in" }

    /// The manifest's rows joined with their handlers (a row without one has none: the registry
    /// refuses such a capability before it serves anything).
    public var commands: [CommandSpec] {
        let byName = Dictionary(handlers.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
        return manifest.commands.map { CommandSpec(row: $0, capability: manifest.name, handler: byName[$0.name]) }
    }

    /// Why the code and the manifest do not fit together, or nil when every row has exactly one handler.
    public var handlerMismatch: String? {
        let rows = Set(manifest.commands.map(\.name)), code = handlers.map(\.name)
        if let extra = code.first(where: { !rows.contains($0) }) { return "its code serves \(extra), which its manifest (\(manifest.file)) does not declare" }
        if let missing = manifest.commands.first(where: { !code.contains($0.name) }) { return "its manifest declares \(missing.name), which its code does not serve" }
        if Set(code).count != code.count { return "its code has two handlers for one command" }
        for row in manifest.commands {
            guard let h = handlers.first(where: { $0.name == row.name }) else { continue }
            let problems = h.paramsMismatches(row.params)
            if !problems.isEmpty {
                return "the params of \(row.name) in its code do not fit its manifest (\(manifest.file)): \(problems.joined(separator: "; "))"
            }
        }
        return nil
    }

    public var lifecycle: (any CapabilityLifecycle)? { self as? any CapabilityLifecycle }
    public var eventSource: (any EventSource)? { self as? any EventSource }
    public var sessionAware: (any GatewaySessionAware)? { self as? any GatewaySessionAware }
    public var presenceAware: (any PresenceAware)? { self as? any PresenceAware }
    public var selfDiagnosing: (any SelfDiagnosing)? { self as? any SelfDiagnosing }
    public var advertisedExtraCaps: [String] { (self as? any AdvertisesExtraCaps)?.extraCaps ?? [] }
    public var controlQueryable: (any ControlQueryable)? { self as? any ControlQueryable }
    public var reportsStatus: (any ReportsStatus)? { self as? any ReportsStatus }
    public var reportsBackend: (any ReportsBackend)? { self as? any ReportsBackend }
    public var reportsActivity: (any ReportsActivity)? { self as? any ReportsActivity }
}

/// Answers questions about the running daemon's own state from its bundle's CLI (`openclaw-node mcp
/// list`: which servers run, which tools they publish): local only, over the control socket, never
/// a gateway command.
public protocol ControlQueryable: Capability {
    func controlQuery(_ request: JSONValue) async -> Result<JSONValue, NodeError>
}

/// Background work while the daemon lives.
public protocol CapabilityLifecycle: Capability {
    /// The daemon's start (never for one-shot CLI commands), after `availability()` said yes and
    /// before the manifest is sent: background work the capability runs while the daemon lives
    /// (location's gpsd watch, a plugin's process, the canvas kiosk window). Returns `.unavailable`
    /// when that work cannot start, so the capability is not advertised. One-shot commands start
    /// what one invoke needs inside the handler.
    func start() async -> Availability
    /// Releases devices/processes (SIGTERM path, reload, one-shot command end).
    func shutdown() async
}

extension CapabilityLifecycle {
    public func start() async -> Availability { .available }
    public func shutdown() async {}
}

/// Node events the capability sends to the gateway (location.update, agent.request from the canvas, …).
public protocol EventSource: Capability {
    /// nil when it has none after all (a setting is off). The daemon forwards them while connected.
    func events() async -> AsyncStream<CapabilityEvent>?
}

/// Takes part in gateway sessions (daemon only).
public protocol GatewaySessionAware: Capability {
    /// Called after every hello-ok (canvas: host URL, A2UI on connect).
    func gatewayConnected(_ link: GatewayLink) async
    /// Called when such a session ends (computer: release held keys and buttons).
    func gatewayDisconnected() async
    /// Gateway event names this capability wants (`chat` for spoken replies).
    var gatewayEvents: Set<String> { get }
    /// One such event, as the gateway sent it.
    func gatewayEvent(_ name: String, _ payload: JSONValue) async
    /// Whether the daemon should also keep an operator session to the gateway for this capability
    /// (talk: chat.send and talk.speak, which a node session may not call).
    var operatorSessionUse: OperatorSessionUse { get }
}

extension GatewaySessionAware {
    public func gatewayConnected(_ link: GatewayLink) async {}
    public func gatewayDisconnected() async {}
    public var gatewayEvents: Set<String> { [] }
    public func gatewayEvent(_ name: String, _ payload: JSONValue) async {}
    public var operatorSessionUse: OperatorSessionUse { .none }
}

/// Told whether someone is at the device, at the daemon's start and on every change.
public protocol PresenceAware: Capability {
    func presenceChanged(foreground: Bool) async
}

/// `openclaw-node doctor`'s checks beyond `availability()` (the manifest's `doctor` rows say what
/// they are): what the capability assumes at run time (device permissions, a service answering, a
/// display for window mode), each saying what to do when it fails. Asked only for enabled
/// capabilities; may probe, must not start anything.
public protocol SelfDiagnosing: Capability {
    func diagnose() async -> [Diagnosis]
}

/// Which of its backends serves on this machine and why the ones before it in `auto`'s order do
/// not (screen: wlroots, GNOME, KDE, X11 or the framebuffer), for `openclaw-node caps`. nil when
/// none can serve (availability says why). Asked only for available capabilities; may probe as
/// `availability()` does, must not start anything.
public protocol ReportsBackend: Capability {
    func backend() async -> String?
}

/// One line for `openclaw-node status` about what the running capability can do now and, when it
/// cannot, why (talk: whether a conversation can start, and what is missing for one).
public protocol ReportsStatus: Capability {
    func statusLine() async -> String
}

/// Work a capability does outside any invoke that a restart (an update) must wait for: a talk
/// conversation, a held push-to-talk capture. nil when there is none. Asked often while a restart
/// waits; must answer at once.
public protocol ReportsActivity: Capability {
    func activity() async -> String?
}

/// Caps advertised besides `name` while the capability is advertised (talk: "voiceWake").
public protocol AdvertisesExtraCaps: Capability {
    var extraCaps: [String] { get }
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
    /// Sends a node event now (bundles use `send(_:_:)` with a `NodeEvent`).
    let sendEvent: @Sendable (String, JSONValue) async -> Bool
    /// Whether the node is connected right now (this session or a later one).
    public let isConnected: @Sendable () async -> Bool
    /// Calls a gateway method; nil when offline or refused (bundles use the typed calls of
    /// GatewayVocabulary.swift).
    let request: @Sendable (String, JSONValue) async -> JSONValue?
    /// Calls a gateway method and keeps its error (a publication tells "unknown method" — an older
    /// gateway — from a refusal of its value); bundles use the typed calls of GatewayVocabulary.swift.
    let call: @Sendable (String, JSONValue, Duration) async -> Result<JSONValue, GatewayCallError>
    /// The operator session, when the daemon keeps one (see `Capability.wantsOperatorSession`).
    public let operatorSession: OperatorSession
    /// Opens a second socket to this gateway (bundles use `openStream`, GatewayStream.swift).
    let streamOpener: @Sendable (String) async -> Result<any GatewayStream, NodeError>

    public init(canvasHostUrl: String?, pluginSurfaceUrls: [String: String], mainSessionKey: String?,
                nodeId: String, displayName: String, isConnected: @escaping @Sendable () async -> Bool,
                request: @escaping @Sendable (String, JSONValue) async -> JSONValue? = { _, _ in nil },
                call: @escaping @Sendable (String, JSONValue, Duration) async -> Result<JSONValue, GatewayCallError> = { _, _, _ in
                    .failure(GatewayCallError(code: NodeError.Code.unavailable.rawValue, message: "not connected to a gateway", details: nil))
                },
                operatorSession: OperatorSession = .none,
                openStream: @escaping @Sendable (String) async -> Result<any GatewayStream, NodeError> = { _ in
                    .failure(NodeError(.unavailable, "not connected to a gateway"))
                },
                sendEvent: @escaping @Sendable (String, JSONValue) async -> Bool) {
        self.canvasHostUrl = canvasHostUrl; self.pluginSurfaceUrls = pluginSurfaceUrls
        self.mainSessionKey = mainSessionKey; self.nodeId = nodeId; self.displayName = displayName
        self.isConnected = isConnected; self.request = request; self.call = call; self.operatorSession = operatorSession
        self.streamOpener = openStream; self.sendEvent = sendEvent
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
    /// there is no operator session). Bundles use the typed calls (chatSend, talkSpeak).
    let call: @Sendable (_ method: String, _ params: JSONValue, _ timeout: Duration) async -> Result<JSONValue, GatewayCallError>

    public init(isConnected: @escaping @Sendable () async -> Bool,
                call: @escaping @Sendable (String, JSONValue, Duration) async -> Result<JSONValue, GatewayCallError>) {
        self.isConnected = isConnected; self.call = call
    }

    public static let none = OperatorSession(isConnected: { false }) { _, _, _ in
        .failure(GatewayCallError(code: NodeError.Code.unavailable.rawValue, message: "no operator session", details: nil))
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
    public init(_ event: NodeEvent, payload: JSONValue) { self.event = event.name; self.payload = payload }
}
