import Config
import Kit
import NodeDaemon
import Registry
import Store
import Support

/// `openclaw-node caps [--json]`: the connect manifest, derived from the command table.
enum CapsCommand {
    static let help = """
        Usage: openclaw-node caps [COMMAND] [--json] [--config FILE]

        Shows what this node declares to the gateway: capabilities, commands and permissions, and
        why anything is not advertised.
          COMMAND  one command's row: its gates and every param (type, range or values, default,
                   required, meaning), as its bundle's manifest declares them and the node checks them
          --json   the manifest as JSON ({caps, commands, permissions, notAdvertised, table}; each table
                   row has params in words and paramsSchema, the params as JSON Schema)
          --markdown  every installed command and its params as markdown (docs/COMMANDS.md), from the
                   manifests alone
        """

    static func main(_ args: [String], capabilities: CLI.CapabilityFactory) async throws -> Int32 {
        let a = try Arguments(args, valued: ["config"], known: ["json", "markdown"])
        if a.flag("help") { Out.line(help); return ExitCode.ok.rawValue }
        if a.flag("markdown") { Out.line(CommandCatalogMarkdown.text(BundleCatalog.current.manifests)); return ExitCode.ok.rawValue }
        let config = try CLI.loadConfig(a)
        let registry = await CommandRegistry.load(try capabilities(config, NodeRuntime.presenceMonitor(config)), enabled: { config.isEnabled($0) })
        let m = registry.manifest
        if let name = a.positionals.first {
            guard let spec = registry.allSpecs.first(where: { $0.name == name }) else {
                let hint = Suggest.closest(to: name, in: registry.allSpecs.map(\.name)).map { " Did you mean \($0)?" } ?? ""
                Out.err("caps: no command \(name) on this node.\(hint) `openclaw-node caps` lists them.")
                return ExitCode.usage.rawValue
            }
            if a.flag("json") { Out.json(ParamsJSONSchema.object(spec.row.params)); return ExitCode.ok.rawValue }
            Out.line(CommandRowText.text(spec.row, advertised: m.commands.contains(spec.name)))
            return ExitCode.ok.rawValue
        }
        if a.flag("json") {
            var doc = ManifestDocument.json(registry, refused: config.catalog.refusedReasons)
            let backends = await backendLines(registry)
            if case .object(var o) = doc {
                o["backends"] = .object(Dictionary(backends.map { ($0.0, JSONValue.string($0.1)) }, uniquingKeysWith: { a, _ in a }))
                doc = .object(o)
            }
            Out.json(doc)
            return ExitCode.ok.rawValue
        }
        Out.line("Capabilities: \(m.caps.isEmpty ? "(none)" : m.caps.joined(separator: ", "))")
        Out.line("Commands:")
        for spec in registry.allSpecs {
            let advertised = m.commands.contains(spec.name)
            var marks: [String] = []
            if spec.requiresForeground { marks.append("foreground") }
            if spec.dangerous { marks.append("dangerous") }
            Out.line("  \(advertised ? "+" : "-") \(spec.name.padded(to: 24)) \(spec.summary)\(marks.isEmpty ? "" : " [\(marks.joined(separator: ", "))]")")
        }
        if !m.permissions.isEmpty {
            Out.line("Permissions: " + m.permissions.keys.sorted().map { "\($0)=\(m.permissions[$0]! ? "yes" : "no")" }.joined(separator: ", "))
        }
        let backends = await backendLines(registry)
        if !backends.isEmpty {
            Out.line("Served through:")
            for (name, line) in backends { Out.line("  \(name): \(line)") }
        }
        let reasons = registry.notAdvertisedReasons + config.catalog.refusedReasons
        if !reasons.isEmpty {
            Out.line("Not advertised (-):")
            for r in reasons { Out.line("  \(r)") }
        }
        return ExitCode.ok.rawValue
    }
}

extension CapsCommand {
    /// Which backend serves each advertised capability that has several (screen, computer,
    /// desktop): what `auto` picked here and why the others were not used.
    static func backendLines(_ registry: CommandRegistry) async -> [(String, String)] {
        var out: [(String, String)] = []
        for e in registry.entries where e.advertised {
            if let line = await e.capability.reportsBackend?.backend() { out.append((e.capability.name, line)) }
        }
        return out
    }
}

/// The manifest and command table as JSON (for `caps --json`, docs and doctor).
public enum ManifestDocument {
    public static func json(_ registry: CommandRegistry, refused: [String] = []) -> JSONValue {
        let m = registry.manifest
        let table: [JSONValue] = registry.allSpecs.map { s in
            var row: [String: JSONValue] = ["name": .string(s.name), "capability": .string(s.capability),
                                            "requiresForeground": .bool(s.requiresForeground), "dangerous": .bool(s.dangerous),
                                            "advertised": .bool(m.commands.contains(s.name)), "summary": .string(s.summary)]
            if let p = s.permission { row["permission"] = .string(p) }
            if !s.paramsDoc.isEmpty {
                row["params"] = .object(Dictionary(s.paramsDoc.map { ($0.0, JSONValue.string($0.1)) }, uniquingKeysWith: { a, _ in a }))
            }
            // The same rows as JSON Schema, for programs that build calls (an agent's tool list).
            row["paramsSchema"] = ParamsJSONSchema.object(s.row.params)
            return .object(row)
        }
        return ["caps": .array(m.caps.map { .string($0) }), "commands": .array(m.commands.map { .string($0) }),
                "permissions": .object(m.permissions.mapValues { .bool($0) }),
                "notAdvertised": .array((registry.notAdvertisedReasons + refused).map { .string($0) }), "table": .array(table)]
    }
}
