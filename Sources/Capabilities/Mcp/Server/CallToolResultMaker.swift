import Kit
import Support

/// A node command's answer as an MCP `CallToolResult`. A payload that carries a file (`base64`
/// with its `format`: camera.snap, screen.snapshot, canvas.snapshot, clips, audio) gives a content
/// block of its kind — an `image` block for pictures, `audio` for sound, an embedded resource for
/// video — and the rest of the payload as `structuredContent` with its JSON as text. A node error
/// is a result with `isError: true` and its code, so the agent reads why (not a protocol error).
enum CallToolResultMaker {
    /// MIME types of the `format` values commands answer with.
    static let mimeTypes: [String: String] = [
        "jpg": "image/jpeg", "jpeg": "image/jpeg", "png": "image/png", "webp": "image/webp", "gif": "image/gif",
        "mp4": "video/mp4", "webm": "video/webm", "wav": "audio/wav", "mp3": "audio/mpeg", "ogg": "audio/ogg",
        "opus": "audio/ogg", "pcm": "audio/L16",
    ]

    /// What a person at the device runs to approve a command the node refused for want of an approval.
    static let approvalHint = "This needs a person's approval on this machine. To allow the program for good: "
        + "openclaw-node approvals allow PATTERN (a path glob or a name on PATH). For one run: call system.run.prepare "
        + "with the same command, then the person runs openclaw-node approvals pending and openclaw-node approvals approve PLAN, "
        + "and system.run is called again. openclaw-node approvals --help says more."

    static func result(command: String, _ outcome: Result<JSONValue, NodeError>, protocolVersion: String) -> JSONValue {
        switch outcome {
        case .failure(let e):
            let text = e.message.hasPrefix(e.code.rawValue + ":") ? e.message : "\(e.code.rawValue): \(e.message)"
            var content: [JSONValue] = [["type": "text", "text": .string(text)]]
            // An approval only a person can give: say where they give it (the agent tells them).
            if e.message.lowercased().contains("approval") { content.append(["type": "text", "text": .string(approvalHint)]) }
            var out: [String: JSONValue] = ["isError": true, "content": .array(content)]
            if protocolVersion >= "2025-06-18" { out["structuredContent"] = ["error": e.json] }
            return .object(out)
        case .success(let payload):
            var content: [JSONValue] = []
            var rest = payload
            // `base64` (camera, screen, canvas) or `audioBase64` (tts.speak), with its `format`.
            let fileKey = ["base64", "audioBase64"].first { payload[$0]?.stringValue != nil }
            if case .object(var o) = payload, let fileKey, let data = o[fileKey]?.stringValue, let format = o["format"]?.stringValue {
                let mime = mimeTypes[format.lowercased()] ?? "application/octet-stream"
                o[fileKey] = nil
                o["mimeType"] = .string(mime)
                rest = .object(o)
                content.append(block(data: data, mime: mime, command: command, format: format, protocolVersion: protocolVersion))
            }
            content.insert(["type": "text", "text": .string(rest.jsonString())], at: 0)
            var out: [String: JSONValue] = ["content": .array(content), "isError": false]
            // structuredContent (MCP 2025-06-18 on) must be an object.
            if case .object = rest, protocolVersion >= "2025-06-18" { out["structuredContent"] = rest }
            return .object(out)
        }
    }

    private static func block(data: String, mime: String, command: String, format: String, protocolVersion: String) -> JSONValue {
        if mime.hasPrefix("image/") { return ["type": "image", "data": .string(data), "mimeType": .string(mime)] }
        // Audio blocks came with MCP 2025-03-26; before that, and for video, an embedded resource.
        if mime.hasPrefix("audio/"), protocolVersion >= "2025-03-26" { return ["type": "audio", "data": .string(data), "mimeType": .string(mime)] }
        return ["type": "resource", "resource": ["uri": .string("openclaw-node://\(command)/result.\(format.lowercased())"),
                                                 "mimeType": .string(mime), "blob": .string(data)]]
    }
}
