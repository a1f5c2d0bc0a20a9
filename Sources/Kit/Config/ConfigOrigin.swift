import Support

/// Where each setting of a merged config came from (`config show --origin`, doctor): every leaf
/// of the document — a value that is not an object, or an empty object — with its key path and
/// the file:line:col that set it.
public struct ConfigOrigin: Sendable, Equatable {
    public let keyPath: String
    public let value: JSONValue
    public let file: String
    public let location: SourceLocation

    /// The leaves in document order; a key repeated in one object counts once, where it last stood.
    public static func leaves(of node: JSON5Node) -> [ConfigOrigin] {
        var out: [ConfigOrigin] = []
        collect(node, path: "", into: &out)
        return out
    }

    private static func collect(_ node: JSON5Node, path: String, into out: inout [ConfigOrigin]) {
        guard case .object(let members) = node.kind, !members.isEmpty else {
            out.append(ConfigOrigin(keyPath: path, value: node.plain, file: node.file, location: node.location))
            return
        }
        for (i, m) in members.enumerated() where !members[(i + 1)...].contains(where: { $0.key == m.key }) {
            collect(m.value, path: path.isEmpty ? m.key : "\(path).\(m.key)", into: &out)
        }
    }

    /// Whether the key names a secret whose value is not printed (the gateway's token, password and
    /// setup code, an MCP server's bearer token, a plugin's `apiKey`). A `${NAME}` reference is
    /// printed as written: it names a variable, it is not the secret.
    public var holdsSecret: Bool {
        let key = (keyPath.split(separator: ".").last.map(String.init) ?? keyPath).lowercased()
        let secretish = ["token", "password", "setupcode", "secret", "apikey", "bearer"].contains { key.contains($0) }
        guard case .string(let s) = value, !(s.hasPrefix("${") && s.hasSuffix("}")) else { return false }
        return secretish
    }
}
