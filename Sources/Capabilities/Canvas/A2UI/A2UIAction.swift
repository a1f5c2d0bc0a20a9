import Config
import Glibc
import Kit
import Support

/// A user action posted by the canvas page (`{userAction:{id, name|action, surfaceId?,
/// sourceComponentId?, context?}}`) and the `agent.request` node event the mobile nodes send for
/// it (OpenClawKit CanvasA2UIAction; docs/PROTOCOL.md §7.4).
struct A2UIAction: Equatable {
    let id: String
    let name: String
    let surfaceId: String
    let sourceComponentId: String
    /// Compact JSON of the context object, if any.
    let contextJSON: String?

    /// nil when the message is not a user action or has no name (dropped, as the apps do).
    init?(message: String) {
        guard let v = JSONValue.parse(message), let a = v["userAction"], a.objectValue != nil else { return nil }
        let name = [a["name"]?.stringValue, a["action"]?.stringValue].compactMap { $0 }
            .map { $0.trimmed() }.first { !$0.isEmpty }
        guard let name else { return nil }
        self.name = name
        id = a["id"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 } ?? SecureRandom.uuid()
        surfaceId = a["surfaceId"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 } ?? "main"
        sourceComponentId = a["sourceComponentId"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 } ?? "-"
        contextJSON = a["context"].flatMap { $0.objectValue != nil ? $0.jsonString() : nil }
    }

    /// `[A-Za-z0-9_.:-]` only; spaces become `_`, other characters `_`, empty `-`.
    static func tag(_ s: String) -> String {
        let t = s.trimmed()
        if t.isEmpty { return "-" }
        return String(t.unicodeScalars.map { c -> Character in
            (c.isASCII && (c.properties.isAlphabetic || ("0"..."9").contains(c) || "_-.:".unicodeScalars.contains(c))) ? Character(c) : "_"
        })
    }

    func agentMessage(sessionKey: String, host: String, instanceId: String) -> String {
        var parts = ["CANVAS_A2UI", "action=\(Self.tag(name))", "session=\(Self.tag(sessionKey))",
                     "surface=\(Self.tag(surfaceId))", "component=\(Self.tag(sourceComponentId))",
                     "host=\(Self.tag(host))", "instance=\(Self.tag(instanceId.lowercased()))"]
        if let contextJSON { parts.append("ctx=\(contextJSON)") }
        parts.append("default=update_canvas")
        return parts.joined(separator: " ")
    }

    func eventPayload(sessionKey: String, host: String, instanceId: String) -> JSONValue {
        ["message": .string(agentMessage(sessionKey: sessionKey, host: host, instanceId: instanceId)),
         "sessionKey": .string(sessionKey), "thinking": "low", "deliver": false, "key": .string(id)]
    }

    /// Tells the page how the action went (the apps' `openclaw:a2ui-action-status` event).
    static func statusScript(id: String, ok: Bool, error: String) -> String {
        let detail: JSONValue = ["id": .string(id), "ok": .bool(ok), "error": .string(error)]
        return "window.dispatchEvent(new CustomEvent('openclaw:a2ui-action-status', {detail: \(detail.jsonString())}))"
    }
}
