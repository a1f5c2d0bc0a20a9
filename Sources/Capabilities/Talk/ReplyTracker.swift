import Kit
import Support

/// Follows the agent's reply to a transcript the way Android's VoiceWakeReplyTracker does: armed on
/// a session right after voice.transcript, it adopts the first run seen on that session, and its
/// `final` chat event carries the text to speak; `aborted` or `error` end it silently, and it
/// gives up after 90 s. After chat.send the run is known from the ack and only it is followed (an
/// operator session sees every session's chat events).
final class ReplyTracker: Sendable {
    static let timeout: Duration = .seconds(90)

    private struct Armed: Sendable {
        let sessionKey: String
        var runId: String?
        let until: ContinuousClock.Instant
    }

    private let armed = Locked<Armed?>(nil)

    func arm(sessionKey: String, runId: String? = nil) {
        armed.withLock { $0 = Armed(sessionKey: sessionKey, runId: runId, until: .now + Self.timeout) }
    }

    var isArmed: Bool { armed.withLock { $0.map { ContinuousClock.now < $0.until } ?? false } }
    var sessionKey: String? { armed.withLock { $0?.sessionKey } }

    /// The reply's text when this `chat` event ends it; nil otherwise.
    func handle(_ p: JSONValue) -> String? {
        armed.withLock { (armed: inout Armed?) -> String? in
            guard var a = armed else { return nil }
            guard ContinuousClock.now < a.until else { armed = nil; return nil }
            guard let key = p["sessionKey"]?.stringValue, Self.sameSession(key, a.sessionKey), let run = p["runId"]?.stringValue else { return nil }
            if a.runId == nil { a.runId = run; armed = a }
            guard a.runId == run else { return nil }
            switch p["state"]?.stringValue {
            case "final":
                armed = nil
                let text = Self.text(of: p["message"])
                return text.isEmpty ? nil : text
            case "aborted", "error":
                armed = nil
                return nil
            default:
                return nil
            }
        }
    }

    /// "main" and its canonical form "agent:main:main" name the same session (a bare key belongs
    /// to the default agent, "main"); "agent:other:main" is another agent's.
    static func sameSession(_ a: String, _ b: String) -> Bool {
        func canonical(_ k: String) -> String { k.hasPrefix("agent:") ? k : "agent:main:" + k }
        return canonical(a) == canonical(b)
    }

    /// An assistant message's text parts, joined by newlines, without a leading voice-directive
    /// line (a JSON object the agent may put first for the apps' voices).
    static func text(of message: JSONValue?) -> String {
        guard let m = message, m["role"]?.stringValue ?? "assistant" == "assistant" else { return "" }
        let parts: [String]
        if let s = m["content"]?.stringValue { parts = [s] }
        else {
            parts = (m["content"]?.arrayValue ?? []).compactMap { part in
                part.stringValue ?? (part["type"]?.stringValue == "text" ? part["text"]?.stringValue : nil)
            }
        }
        var lines = parts.joined(separator: "\n").split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        if let first = lines.first?.trimmed(), first.hasPrefix("{"), JSONValue.parse(first)?.objectValue != nil { lines.removeFirst() }
        return lines.joined(separator: "\n").trimmed()
    }
}
