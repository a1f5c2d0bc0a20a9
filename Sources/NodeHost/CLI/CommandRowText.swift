import Config
import Support

/// One command's row in words, for `caps COMMAND` and the man page: its gates and its params.
enum CommandRowText {
    static func text(_ row: BundleManifest.Command, advertised: Bool) -> String {
        var gates = [row.requiresForeground ? "foreground only" : nil, row.dangerous ? "dangerous (needs a gateway allow entry)" : nil,
                     row.duplex ? "duplex" : nil].compactMap { $0 }
        if !advertised { gates.append("not advertised (see `openclaw-node caps`)") }
        var lines = ["\(row.name): \(row.summary)"]
        if !gates.isEmpty { lines.append("  " + gates.joined(separator: "; ")) }
        lines.append(row.params.isEmpty ? "  params: none" : "  params:")
        lines += paramLines(row.params, indent: "    ")
        return lines.joined(separator: "\n")
    }

    /// One line per param (nested objects' fields indented below theirs).
    static func paramLines(_ fields: [ConfigField], indent: String) -> [String] {
        fields.flatMap { f -> [String] in
            let line = "\(indent)\(f.key)  \(ParamDoc.text(f))"
            if case .object(let sub) = f.type.shape { return [line] + paramLines(sub, indent: indent + "  ") }
            return [line]
        }
    }
}
