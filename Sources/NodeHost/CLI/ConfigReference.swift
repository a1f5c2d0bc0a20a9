import Config
import Support

/// The config's keys as text, one per line with its type, default and meaning, derived from the
/// schema (the core's keys and each installed bundle's manifest): `config reference`, the man page.
enum ConfigReference {
    static func text(_ fields: [ConfigField], indent: String = "") -> String {
        var lines: [String] = []
        for f in fields {
            let def = f.defaultText.map { ", default \($0)" } ?? ""
            switch f.type.shape {
            case .object(let sub):
                lines.append("\(indent)\(f.key): { … }  — \(f.doc)")
                lines.append(text(sub, indent: indent + "  "))
            case .map(let value) where value.objectFields != nil:
                let rule = if case .exactlyOne(let keys, _) = value { " (each with exactly one of \(keys.joined(separator: ", ")))" } else { "" }
                lines.append("\(indent)\(f.key): { <name>: { … } }  — \(f.doc)\(rule)")
                lines.append(text(value.objectFields ?? [], indent: indent + "  "))
            default:
                lines.append("\(indent)\(f.key): \(f.type.description)\(def)  — \(f.doc)")
            }
        }
        return lines.joined(separator: "\n")
    }
}
