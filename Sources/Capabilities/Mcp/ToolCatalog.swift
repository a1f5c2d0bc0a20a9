import Kit
import Support

/// The node's MCP tools as `node.pluginTools.update` descriptors, by the reference host's rules:
/// names `<server>_<tool>` made safe for the gateway's `^[A-Za-z][A-Za-z0-9_-]{0,63}$` and unique
/// regardless of case, descriptions cleaned and cut, sorted by server then tool, and the
/// catalogue's caps (128 tools, 1 MiB each, 10 MiB in all).
enum ToolCatalog {
    static let pluginId = "node-mcp"
    static let maxTools = 128
    static let maxDescriptorBytes = 1 << 20
    static let maxCatalogBytes = 10 << 20
    static let maxDescriptionChars = 1024
    /// What a tool without an input schema takes: any object.
    static let anyObject: JSONValue = ["type": "object", "properties": [:], "additionalProperties": true]

    /// The descriptors for `tools` (server name → its offered tools), and a line per tool left out.
    static func build(_ tools: [(server: String, tools: [McpTool])]) -> (descriptors: [PluginToolDescriptor], leftOut: [String]) {
        var out: [PluginToolDescriptor] = [], leftOut: [String] = [], taken = Set<String>(), total = 0
        for (server, list) in tools.sorted(by: { $0.server < $1.server }) {
            for tool in list.sorted(by: { $0.name < $1.name }) {
                guard out.count < maxTools else { leftOut.append("\(server)/\(tool.name): more than \(maxTools) tools in all"); continue }
                let name = unique(name(server: server, tool: tool.name), taken: &taken)
                let d = PluginToolDescriptor(pluginId: pluginId, name: name, description: description(tool),
                                             parameters: tool.inputSchema?.objectValue != nil ? tool.inputSchema : anyObject,
                                             command: McpCommand.call.rawValue, mcp: .init(server: server, tool: tool.name))
                let size = ((try? JSONValue.from(d)) ?? .null).jsonString().utf8.count
                guard size <= maxDescriptorBytes else { leftOut.append("\(server)/\(tool.name): its descriptor is larger than 1 MiB"); continue }
                guard total + size <= maxCatalogBytes else { leftOut.append("\(server)/\(tool.name): the catalogue would pass 10 MiB"); continue }
                total += size
                out.append(d)
            }
        }
        return (out, leftOut)
    }

    /// `<server>_<tool>`: characters outside [A-Za-z0-9_-] become `_` (one per run), `_`/`-` at the
    /// ends are trimmed, a server part that does not start with a letter gets `mcp_`, the server
    /// part is at most 31 characters and the whole at most 64.
    static func name(server: String, tool: String) -> String {
        var s = clean(server)
        if s.isEmpty { s = "mcp" } else if !(s.unicodeScalars.first?.properties.isAlphabetic ?? false) { s = "mcp_" + s }
        s = String(s.prefix(31)).trimming(nameEnds)
        var t = clean(tool)
        if t.isEmpty { t = "tool" }
        return String((s + "_" + t).prefix(64)).trimming(nameEnds)
    }

    /// `_2`, `_3`, … after a name already taken (compared without case).
    static func unique(_ name: String, taken: inout Set<String>) -> String {
        var candidate = name, n = 2
        while taken.contains(candidate.lowercased()) {
            let suffix = "_\(n)"
            candidate = String(name.prefix(64 - suffix.count)) + suffix
            n += 1
        }
        taken.insert(candidate.lowercased())
        return candidate
    }

    static func description(_ tool: McpTool) -> String {
        let text = (tool.description ?? "").unicodeScalars.map { $0.properties.generalCategory == .control ? " " : String($0) }.joined()
        let words = text.split(whereSeparator: { $0 == " " }).joined(separator: " ")
        let d = words.isEmpty ? (tool.name.isEmpty ? "MCP tool" : tool.name) : words
        return String(d.prefix(maxDescriptionChars))
    }

    private static func clean(_ s: String) -> String {
        var out = "", inRun = false
        for u in s.unicodeScalars {
            if u.isASCII && (u.properties.isAlphabetic || ("0"..."9").contains(u) || u == "_" || u == "-") { out.unicodeScalars.append(u); inRun = false }
            else if !inRun { out += "_"; inRun = true }
        }
        return out.trimming(nameEnds)
    }

    /// What a name may not start or end with.
    private static let nameEnds: Set<Character> = ["_", "-"]
}
