import Support

/// The node events bundles send (`node.event`), by their wire names: one place, so no bundle writes
/// an event or method name as a string. Plugins, which name their own events, use `custom`.
public struct NodeEvent: Sendable, Equatable, Hashable, CustomStringConvertible {
    public let name: String
    private init(_ name: String) { self.name = name }

    /// A transcript for the agent (talk without an operator session).
    public static let voiceTranscript = NodeEvent("voice.transcript")
    /// Follow a chat session's replies (talk speaks them).
    public static let chatSubscribe = NodeEvent("chat.subscribe")
    /// A canvas page's request to the agent (A2UI actions).
    public static let agentRequest = NodeEvent("agent.request")
    /// A significant change of position.
    public static let locationUpdate = NodeEvent("location.update")
    /// system.run's lifecycle.
    public static let execStarted = NodeEvent("exec.started")
    public static let execFinished = NodeEvent("exec.finished")
    public static let execDenied = NodeEvent("exec.denied")
    /// An out-of-process plugin's own event name, passed through.
    public static func custom(_ name: String) -> NodeEvent { NodeEvent(name) }

    public var description: String { name }
}

/// `chat.send` on the operator session: a message into an agent session.
public struct ChatSendRequest: Sendable, Equatable {
    public var sessionKey: String
    public var message: String
    /// The gateway names the run after it; a repeat with the same key is answered with that run.
    public var idempotencyKey: String
    public init(sessionKey: String, message: String, idempotencyKey: String) {
        self.sessionKey = sessionKey; self.message = message; self.idempotencyKey = idempotencyKey
    }
    var params: JSONValue { ["sessionKey": .string(sessionKey), "message": .string(message), "idempotencyKey": .string(idempotencyKey)] }
}

/// The gateway's acknowledgement of `chat.send`.
public struct ChatSendReply: Sendable, Equatable {
    public let runId: String?
    public let status: String?
}

/// `talk.speak` on the operator session: the gateway's voice for a reply.
public struct TalkSpeakRequest: Sendable, Equatable {
    public var text: String
    public var outputFormat: String
    public init(text: String, outputFormat: String) { self.text = text; self.outputFormat = outputFormat }
    var params: JSONValue { ["text": .string(text), "outputFormat": .string(outputFormat)] }
}

/// What `talk.speak` answers: base64 audio and what it is.
public struct TalkSpeakReply: Sendable, Equatable {
    public let audioBase64: String?
    public let outputFormat: String?
    public let mimeType: String?
    public let fileExtension: String?
    public let provider: String?
}

extension OperatorSession {
    public func chatSend(_ r: ChatSendRequest, timeout: Duration) async -> Result<ChatSendReply, GatewayCallError> {
        await call("chat.send", r.params, timeout).map { ChatSendReply(runId: $0["runId"]?.stringValue, status: $0["status"]?.stringValue) }
    }

    public func talkSpeak(_ r: TalkSpeakRequest, timeout: Duration) async -> Result<TalkSpeakReply, GatewayCallError> {
        await call("talk.speak", r.params, timeout).map { p in
            TalkSpeakReply(audioBase64: p["audioBase64"]?.stringValue, outputFormat: p["outputFormat"]?.stringValue,
                           mimeType: p["mimeType"]?.stringValue, fileExtension: p["fileExtension"]?.stringValue,
                           provider: p["provider"]?.stringValue)
        }
    }
}

extension GatewayLink {
    /// Sends a node event now; false when not connected or not accepted (never held for later).
    public func send(_ event: NodeEvent, _ payload: JSONValue) async -> Bool { await sendEvent(event.name, payload) }

    /// A fresh scoped URL of a plugin surface the gateway serves (newest gateways; capability
    /// tokens expire): `node.pluginSurface.refresh`. nil when the gateway gave none.
    public func refreshPluginSurfaceURL(_ surface: String) async -> String? {
        let fresh = await request("node.pluginSurface.refresh", ["surface": .string(surface)])?["pluginSurfaceUrls"]?[surface]?.stringValue
        return fresh.flatMap { $0.isEmpty ? nil : $0 }
    }

    /// The same for older gateways' scoped canvas host URL: `node.canvas.capability.refresh`.
    public func refreshCanvasCapabilityURL() async -> String? {
        let fresh = await request("node.canvas.capability.refresh", [:])?["canvasHostUrl"]?.stringValue
        return fresh.flatMap { $0.isEmpty ? nil : $0 }
    }
}
