import Config
import Glibc
import Kit
import Support

/// A2UI v0.8 server-to-client messages as the mobile nodes accept them: each a JSON object with
/// exactly one of the four message kinds; v0.9 (`createSurface`) is refused with a pointer to the
/// version. Caps keep one push from tying up the page: the gateway's own JSONL limit is 8 MiB.
enum A2UIMessages {
    static let kinds = ["beginRendering", "dataModelUpdate", "deleteSurface", "surfaceUpdate"]
    static let maxBytes = 8 * 1024 * 1024
    static let maxMessages = 10_000

    /// The messages of a push: `messages` when given, else the lines of `jsonl`.
    static func from(messages: [JSONValue]?, jsonl: String?) throws(NodeError) -> [JSONValue] {
        if let messages {
            guard !messages.isEmpty else { throw NodeError.invalidRequest("messages[] required") }
            guard messages.count <= maxMessages else { throw NodeError.invalidRequest("at most \(maxMessages) A2UI messages per push") }
            for (i, m) in messages.enumerated() {
                guard m.objectValue != nil else { throw NodeError.invalidRequest("A2UI messages[\(i)]: expected a JSON object") }
                try check(m, label: "A2UI messages[\(i)]")
            }
            return messages
        }
        guard let jsonl, !jsonl.trimmed().isEmpty else {
            throw NodeError.invalidRequest("jsonl required")
        }
        guard jsonl.utf8.count <= maxBytes else { throw NodeError.invalidRequest("jsonl is over \(maxBytes) bytes") }
        var out: [JSONValue] = []
        for (i, line) in jsonl.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let t = line.trimmed()
            if t.isEmpty { continue }
            guard let v = JSONValue.parse(String(t)), v.objectValue != nil else {
                throw NodeError.invalidRequest("A2UI JSONL line \(i + 1): expected a JSON object")
            }
            try check(v, label: "A2UI JSONL line \(i + 1)")
            out.append(v)
            guard out.count <= maxMessages else { throw NodeError.invalidRequest("at most \(maxMessages) A2UI messages per push") }
        }
        guard !out.isEmpty else { throw NodeError.invalidRequest("jsonl required") }
        return out
    }

    static func check(_ m: JSONValue, label: String) throws(NodeError) {
        let keys = Set(m.objectValue?.keys.map { $0 } ?? [])
        if keys.contains("createSurface") {
            throw NodeError.invalidRequest("\(label): looks like A2UI v0.9 (`createSurface`). Canvas supports v0.8 messages only.")
        }
        let found = kinds.filter(keys.contains)
        guard found.count == 1 else {
            throw NodeError.invalidRequest("\(label): expected exactly one of \(kinds.joined(separator: ", ")); found: \(keys.sorted().joined(separator: ", "))")
        }
    }

    /// Script that hands `messages` to the page's renderer; its return value is the payload.
    static func pushScript(_ messages: [JSONValue]) -> String {
        hostCall("host.applyMessages(\(JSONValue.array(messages).jsonString()))")
    }

    static let resetScript = hostCall("host.reset()")

    /// Readiness: the renderer has loaded and can take messages.
    static let readyScript = "(() => { const h = globalThis.openclawA2UI; return !!h && typeof h.applyMessages === 'function'; })()"

    private static func hostCall(_ call: String) -> String {
        """
        (() => { try { const host = globalThis.openclawA2UI; if (!host) return {ok:false, error:"missing openclawA2UI"}; \
        return \(call) ?? {ok:true}; } catch (e) { return {ok:false, error:String(e?.message ?? e)}; } })()
        """
    }
}
