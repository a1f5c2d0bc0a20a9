import Support

/// What `mcp.tools.call.v1` returns of a server's CallToolResult, by the reference host's bounds:
/// `content` always there, `structuredContent` when given, `isError` only when true; text blocks
/// that only repeat `structuredContent` removed; at most 1 MiB of text (the rest cut with a
/// marker) and 20 MiB in all (else one marker block instead).
enum CallResultBounds {
    static let maxTextBytes = 1 << 20
    static let maxResultBytes = 20 << 20
    static let textMarker = "\n[truncated: MCP text content exceeded 1 MB]"
    static let resultMarker = "[truncated: MCP result exceeded 20 MB]"

    static func bound(_ result: JSONValue) -> JSONValue {
        let structured = result["structuredContent"]
        var content: [JSONValue] = []
        var textLeft = maxTextBytes, cut = false
        for block in result["content"]?.arrayValue ?? [] {
            guard block["type"]?.stringValue == "text", let text = block["text"]?.stringValue else {
                content.append(block); continue
            }
            if let structured, structured != .null, JSONValue.parse(text) == structured { continue }
            if cut { continue }
            let n = text.utf8.count
            if n <= textLeft { content.append(block); textLeft -= n; continue }
            var kept = block.objectValue ?? [:]
            kept["text"] = .string(prefix(text, bytes: textLeft) + textMarker)
            content.append(.object(kept))
            cut = true
        }
        var out: [String: JSONValue] = ["content": .array(content)]
        if let structured, structured != .null { out["structuredContent"] = structured }
        if result["isError"]?.boolValue == true { out["isError"] = true }
        if JSONValue.object(out).jsonString().utf8.count > maxResultBytes {
            var small: [String: JSONValue] = ["content": [["type": "text", "text": .string(resultMarker)]]]
            if out["isError"] != nil { small["isError"] = true }
            return .object(small)
        }
        return .object(out)
    }

    /// The longest prefix of `text` of at most `bytes` UTF-8 bytes, cut between code points.
    static func prefix(_ text: String, bytes: Int) -> String {
        var used = 0, out = String.UnicodeScalarView()
        for u in text.unicodeScalars {
            let w = UTF8.width(u)
            guard used + w <= bytes else { break }
            used += w
            out.append(u)
        }
        return String(out)
    }
}
