import Support

/// One `capabilities.<name>` section: the enabled flag plus the capability's own keys, with
/// every constant default of its manifest filled in. All a bundle sees of the config file.
public struct BundleSection: Sendable, Equatable {
    public var enabled: Bool
    public var settings: [String: JSONValue]
    public init(enabled: Bool, settings: [String: JSONValue]) { self.enabled = enabled; self.settings = settings }
    public func string(_ key: String) -> String? { settings[key]?.stringValue }
    public func bool(_ key: String) -> Bool? { settings[key]?.boolValue }
    public func int(_ key: String) -> Int? { settings[key]?.intValue }
    public func strings(_ key: String) -> [String]? { settings[key]?.arrayValue?.compactMap(\.stringValue) }

    /// `written` (the section as in the file, without `enabled`) with the manifest's defaults
    /// for every key it leaves out, into objects and the entries of maps of objects.
    public static func filling(_ written: [String: JSONValue], enabled: Bool, from fields: [ConfigField]) -> BundleSection {
        BundleSection(enabled: enabled, settings: fill(written, fields))
    }

    private static func fill(_ written: [String: JSONValue], _ fields: [ConfigField]) -> [String: JSONValue] {
        var out = written
        for f in fields {
            if case .object(let sub) = f.type.shape {
                let inner = fill(written[f.key]?.objectValue ?? [:], sub)
                if !inner.isEmpty || written[f.key] != nil { out[f.key] = .object(inner) }
            } else if case .map(let value) = f.type.shape, let sub = value.objectFields, let entries = written[f.key]?.objectValue {
                // Each entry of a map of objects (an MCP server) gets its keys' defaults too.
                out[f.key] = .object(entries.mapValues { .object(fill($0.objectValue ?? [:], sub)) })
            } else if out[f.key] == nil, let d = f.defaultValue {
                out[f.key] = d
            }
        }
        return out
    }
}
