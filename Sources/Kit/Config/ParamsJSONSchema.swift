import Support

/// A command's params as JSON Schema (draft 2020-12 keywords), from its manifest row: what a
/// program reading `caps --json` (an agent's tool list, an MCP client's `inputSchema`) needs to
/// build a valid call. The same rows the host checks calls against, so the two cannot drift.
public enum ParamsJSONSchema {
    public static func object(_ fields: [ConfigField]) -> JSONValue {
        var properties: [String: JSONValue] = [:]
        for f in fields {
            var p = schema(f.type)
            if case .object(var o) = p {
                o["description"] = .string(f.doc)
                if let d = f.defaultValue { o["default"] = d }
                p = .object(o)
            }
            properties[f.key] = p
        }
        var out: [String: JSONValue] = ["type": "object", "properties": .object(properties)]
        let required = fields.filter(\.required).map { JSONValue.string($0.key) }
        if !required.isEmpty { out["required"] = .array(required) }
        return .object(out)
    }

    static func schema(_ type: ConfigType) -> JSONValue {
        switch type {
        case .string, .domainName, .hostPort: return ["type": "string"]
        case .bool: return ["type": "boolean"]
        case .integer(let r): return ["type": "integer", "minimum": .number(Double(r.lowerBound)), "maximum": .number(Double(r.upperBound))]
        case .number(let r): return ["type": "number", "minimum": .number(r.lowerBound), "maximum": .number(r.upperBound)]
        case .enumeration(let values): return ["type": "string", "enum": .array(values.map { .string($0) })]
        case .stringArray: return ["type": "array", "items": ["type": "string"]]
        case .list(let item): return ["type": "array", "items": schema(item)]
        case .object(let fields): return object(fields)
        case .map(let value): return ["type": "object", "additionalProperties": schema(value)]
        case .any: return [:]
        case .exactlyOne(let keys, let inner):
            guard case .object(var o) = schema(inner) else { return schema(inner) }
            o["oneOf"] = .array(keys.map { ["required": [.string($0)]] })
            return .object(o)
        }
    }
}
