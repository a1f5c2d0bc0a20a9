import Support

/// One `talk.event` of a realtime relay session, as the node uses it: the payload is
/// `{relaySessionId, type, …, talkEvent?}`; unknown types and fields are ignored (the gateway adds
/// both between releases), and only what the node acts on is read.
enum RelayEvent: Sendable, Equatable {
    case ready
    /// Reply audio: PCM16 mono 24 kHz, for the turn `turnId` (a new turn replaces the old one's audio).
    case audio(pcm: [Int16], turnId: String)
    /// An `audio` event without `talkEvent.turnId`, or whose base64 does not decode: a protocol
    /// failure, as the iOS client treats it.
    case badAudio(String)
    case audioDone
    case mark(String)
    /// Stop playback now; `cancelledTurn` when it answers a cancellation (ours or the provider's).
    case clear(cancelledTurn: String?)
    case transcript(role: String, text: String, final: Bool)
    case toolCall(callId: String, name: String, args: JSONValue, forced: Bool)
    case toolCallCancelled(callId: String)
    case error(message: String, phase: String?)
    case close(reason: String)
    /// Telemetry and UI events (inputAudio, responseStarted, toolResult, …).
    case ignored

    /// The relay session the event belongs to.
    static func session(of payload: JSONValue) -> String? { payload["relaySessionId"]?.stringValue }

    init(_ p: JSONValue) {
        let talkEvent = p["talkEvent"]
        switch p["type"]?.stringValue ?? "" {
        case "ready":
            self = .ready
        case "audio":
            guard let turn = talkEvent?["turnId"]?.stringValue, !turn.isEmpty else {
                self = .badAudio("an audio event without talkEvent.turnId"); return
            }
            guard let bytes = p["audioBase64"]?.stringValue.flatMap({ Base64.decode($0) }), bytes.count % 2 == 0 else {
                self = .badAudio("audio that is not base64 PCM16"); return
            }
            self = .audio(pcm: bytes.withUnsafeBytes { Array($0.bindMemory(to: Int16.self)).map { Int16(littleEndian: $0) } }, turnId: turn)
        case "audioDone":
            self = .audioDone
        case "mark":
            self = p["markName"]?.stringValue.map(RelayEvent.mark) ?? .ignored
        case "clear":
            let cancelled = talkEvent?["type"]?.stringValue == "turn.cancelled" ? talkEvent?["turnId"]?.stringValue : nil
            self = .clear(cancelledTurn: cancelled)
        case "transcript":
            self = .transcript(role: p["role"]?.stringValue ?? "", text: p["text"]?.stringValue ?? "", final: p["final"]?.boolValue ?? false)
        case "toolCall":
            guard let id = p["callId"]?.stringValue, let name = p["name"]?.stringValue else { self = .ignored; return }
            self = .toolCall(callId: id, name: name, args: p["args"] ?? [:], forced: p["forced"]?.boolValue ?? false)
        case "toolCallCancelled":
            self = p["callId"]?.stringValue.map { .toolCallCancelled(callId: $0) } ?? .ignored
        case "error":
            self = .error(message: p["message"]?.stringValue ?? "unknown error", phase: p["phase"]?.stringValue)
        case "close":
            self = .close(reason: p["reason"]?.stringValue ?? "completed")
        default:
            self = .ignored
        }
    }
}
