import Config
import Support

/// `openclaw-node config check [FILE]`: exit 0 valid, 2 JSON5 syntax error, 3 not a valid config.
/// `openclaw-node config reference`: every key, from the core's schema and the installed bundles' manifests.
enum ConfigCommand {
    static let help = """
        Usage: openclaw-node config check [FILE] [--config FILE]
               openclaw-node config reference

        check      validates a config file — the core's keys and every installed bundle's section,
                   read from the bundles' manifests — and prints every problem with file:line:col
                   and the key path. Exit codes: 0 valid, 1 unreadable, 2 JSON5 syntax error,
                   3 valid JSON5 but not a valid config.
        reference  prints every key this installation knows, with its type, default and meaning.
        """

    static func main(_ args: [String]) throws -> Int32 {
        let a = try Arguments(args, valued: ["config"], known: [])
        if a.positionals.first == "reference", !a.flag("help") {
            Out.line(ConfigReference.text(ConfigSchema.root(bundles: BundleCatalog.current.manifests)))
            return ExitCode.ok.rawValue
        }
        if a.flag("help") || a.positionals.first != "check" {
            if !a.flag("help") { Out.err("usage: openclaw-node config check [FILE] | config reference") }
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
            Out.line("\(path): OK (gateway: \(c.gateway.url ?? "discovery"), stateDir: \(c.stateDir))")
            return ExitCode.ok.rawValue
        } catch {
            Out.err(error.description)
            switch error {
            case .unreadable: return ExitCode.failure.rawValue
            case .syntax: return ExitCode.configSyntax.rawValue
            case .invalid: return ExitCode.configInvalid.rawValue
            }
        }
    }
}
