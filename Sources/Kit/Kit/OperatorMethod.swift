import Support

/// The operator-session methods bundles call by name, spelled once (GatewayVocabulary.swift has
/// the typed chat.send and talk.speak). The realtime Talk relay's methods take params the bundle
/// builds: each is a closed schema on the gateway, so only the keys it needs are sent.
public struct OperatorMethod: Sendable, Equatable, Hashable, CustomStringConvertible {
    public let name: String
    private init(_ name: String) { self.name = name }

    /// `{}` → the gateway's talk providers and whether realtime is ready (operator.read).
    public static let talkCatalog = OperatorMethod("talk.catalog")
    /// The relay session's lifecycle and audio (operator.talk, or operator.write on older gateways).
    public static let talkSessionCreate = OperatorMethod("talk.session.create")
    public static let talkSessionAppendAudio = OperatorMethod("talk.session.appendAudio")
    public static let talkSessionCancelOutput = OperatorMethod("talk.session.cancelOutput")
    public static let talkSessionAcknowledgeMark = OperatorMethod("talk.session.acknowledgeMark")
    public static let talkSessionSubmitToolResult = OperatorMethod("talk.session.submitToolResult")
    public static let talkSessionSteer = OperatorMethod("talk.session.steer")
    public static let talkSessionClose = OperatorMethod("talk.session.close")
    /// Starts the agent consult a relay's tool call asks for; its answer comes as `chat` events.
    public static let talkClientToolCall = OperatorMethod("talk.client.toolCall")

    public var description: String { name }
}

extension OperatorSession {
    /// Calls one of the methods above: the reply payload, or the gateway's error.
    public func call(_ method: OperatorMethod, _ params: JSONValue, timeout: Duration) async -> Result<JSONValue, GatewayCallError> {
        await call(method.name, params, timeout)
    }
}
