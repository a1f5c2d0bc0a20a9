import Support

/// What `mcp.tools.call.v1` returns of a server's CallToolResult, by the reference host's bounds:
/// `content` always there, `structuredContent` when given, `isError` only when true; text blocks
/// that only repeat `structuredContent` removed; at most 1 MiB of text, marker included (the rest
/// cut) and 20 MiB in all (else one marker block instead).
enum CallResultBounds {
    static let maxTextBytes = 1 << 20
    static let maxResultBytes = 20 << 20
    static let textMarker = "\n[truncated: MCP text content exceeded 1 MB]"
    static let resultMarker = "[truncated: MCP result exceeded 20 MB]"

    static func bound(_ result: JSONValue) -> JSONValue {
        let structured = result["structuredContent"].flatMap { $0 == .null ? nil : $0 }
        let blocks = result["content"]?.arrayValue ?? []
        func isMirror(_ text: String) -> Bool { structured != nil && JSONValue.parse(text) == structured }
        // Upstream's rule: untouched up to 1 MiB of text; past it, the marker counts toward the
        // 1 MiB, so what is kept plus the marker is never more than 1 MiB.
        let total = blocks.reduce(0) { sum, b in
            guard b["type"]?.stringValue == "text", let t = b["text"]?.stringValue, !isMirror(t) else { return sum }
            return sum + t.utf8.count
        }
        let over = total > maxTextBytes
        var textLeft = over ? maxTextBytes - textMarker.utf8.count : Int.max, cut = false
        var content: [JSONValue] = []
        for block in blocks {
            guard block["type"]?.stringValue == "text", let text = block["text"]?.stringValue else {
                content.append(block); continue
            }
            if isMirror(text) || cut { continue }
            let n = text.utf8.count
            if n < textLeft || (n == textLeft && !over) { content.append(block); textLeft -= n; continue }
            if n == textLeft {
                // This block uses up the budget exactly: it stays whole, the marker follows on its own.
                content.append(block)
                content.append(["type": "text", "text": .string(String(textMarker.dropFirst()))])
            } else {
                var kept = block.objectValue ?? [:]
                kept["text"] = .string(prefix(text, bytes: textLeft) + textMarker)
                content.append(.object(kept))
            }
            cut = true
        }
        var out: [String: JSONValue] = ["content": .array(content)]
        if let structured { out["structuredContent"] = structured }
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
