import Config
import Support

/// `openclaw-node config check [FILE]`: exit 0 valid, 2 JSON5 syntax error, 3 not a valid config.
/// `openclaw-node config show [--origin]`: the merged settings (main file and drop-ins), each with the file that set it.
/// `openclaw-node config reference`: every key, from the core's schema and the installed bundles' manifests.
enum ConfigCommand {
    static let help = """
        Usage: openclaw-node config check [FILE] [--config FILE]
               openclaw-node config show [--origin] [--config FILE]
               openclaw-node config reference

        check      validates a config file and its drop-ins — the core's keys and every installed
                   bundle's section, read from the bundles' manifests — and prints every problem
                   with file:line:col and the key path. Exit codes: 0 valid, 1 unreadable,
                   2 JSON5 syntax error, 3 valid JSON5 but not a valid config.
        show       prints every setting the files make, one `key = value` per line, after the
                   drop-ins are merged; --origin adds the file:line:col that set each one.
                   Secrets (tokens, passwords, setup codes) are shown as (set).
        reference  prints every key this installation knows, with its type, default and meaning.

        Drop-ins: every *.json5 in config.d/ beside the config file (/etc/openclaw-node/config.d/,
        ~/.config/openclaw-node/config.d/) is merged over it in name order: objects key by key,
        any other value (a string, a number, a list) replaced whole. Hidden files and editor
        backups are not read.
        """

    static func main(_ args: [String]) throws -> Int32 {
        let a = try Arguments(args, valued: ["config"], known: ["origin"])
        if a.positionals.first == "reference", !a.flag("help") {
            Out.line(ConfigReference.text(ConfigSchema.root(bundles: BundleCatalog.current.manifests)))
            return ExitCode.ok.rawValue
        }
        if a.positionals.first == "show", !a.flag("help") { return show(a) }
        if a.flag("help") || a.positionals.first != "check" {
            if !a.flag("help") { Out.err("usage: openclaw-node config check [FILE] | config show [--origin] | config reference") }
            Out.line(help)
            return a.flag("help") ? ExitCode.ok.rawValue : ExitCode.usage.rawValue
        }
        guard let path = a.positionals.dropFirst().first ?? ConfigLoader.resolvePath(explicit: a.option("config")) else {
            Out.line("no config file found; the built-in defaults are used (that is valid)")
            return ExitCode.ok.rawValue
        }
        do throws(ConfigLoader.Failure) {
            // Every capability section, enabled or not, against the keys its manifest declares.
            let c = try ConfigLoader.load(path: path, environment: [:])
            for r in c.catalog.refused { Out.line("note: \(r.reason)") }
            let dropIns = ConfigDropIns.files(for: path)
            let merged = dropIns.isEmpty ? "" : " with \(dropIns.count) drop-in\(dropIns.count == 1 ? "" : "s") (\(dropIns.map(PathName.lastComponent).joined(separator: ", ")))"
            Out.line("\(path)\(merged): OK (gateway: \(c.gateway.url ?? "discovery"), stateDir: \(c.stateDir))")
            return ExitCode.ok.rawValue
        } catch {
            return fail(error)
        }
    }

    static func show(_ a: Arguments) -> Int32 {
        guard let path = a.positionals.dropFirst().first ?? ConfigLoader.resolvePath(explicit: a.option("config")) else {
            Out.line("no config file found; the built-in defaults are used (openclaw-node config reference lists them)")
            return ExitCode.ok.rawValue
        }
        do throws(ConfigLoader.Failure) {
            // Validated first: a setting the node would refuse is not shown as if it were in force.
            _ = try ConfigLoader.load(path: path, environment: [:])
            let leaves = ConfigOrigin.leaves(of: try ConfigLoader.document(path))
            for leaf in leaves {
                let value = leaf.holdsSecret ? "(set)" : leaf.value.jsonString()
                Out.line(a.flag("origin") ? "\(leaf.keyPath) = \(value)  # \(leaf.file):\(leaf.location)" : "\(leaf.keyPath) = \(value)")
            }
            return ExitCode.ok.rawValue
        } catch {
            return fail(error)
        }
    }

    private static func fail(_ error: ConfigLoader.Failure) -> Int32 {
        Out.err(error.description)
        switch error {
        case .unreadable: return ExitCode.failure.rawValue
        case .syntax: return ExitCode.configSyntax.rawValue
        case .invalid: return ExitCode.configInvalid.rawValue
        }
    }
}
