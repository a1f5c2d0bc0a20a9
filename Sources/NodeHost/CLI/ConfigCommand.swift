import Config
import HostPresence
import Kit
import Registry
import Runtime
import Store
import Support

/// `openclaw-node config check [FILE]`: exit 0 valid, 2 JSON5 syntax error, 3 not a valid config.
enum ConfigCommand {
    static let help = """
        Usage: openclaw-node config check [FILE] [--config FILE]

        Validates a config file and prints every problem with file:line:col and the key path.
        Exit codes: 0 valid, 1 unreadable, 2 JSON5 syntax error, 3 valid JSON5 but not a valid config.
        """

    static func main(_ args: [String]) throws -> Int32 {
        let a = try Arguments(args, valued: ["config"], known: [])
        if a.flag("help") || a.positionals.first != "check" {
            if !a.flag("help") { Out.err("usage: openclaw-node config check [FILE]") }
            Out.line(help)
            return a.flag("help") ? ExitCode.ok.rawValue : ExitCode.usage.rawValue
        }
        guard let path = a.positionals.dropFirst().first ?? ConfigLoader.resolvePath(explicit: a.option("config")) else {
            Out.line("no config file found; the built-in defaults are used (that is valid)")
            return ExitCode.ok.rawValue
        }
        do throws(ConfigLoader.Failure) {
            let c = try ConfigLoader.load(path: path, environment: [:])
            // Every capability section, enabled or not, against the keys its bundle declares.
            var errors: [ConfigError] = []
            for name in c.bundledCapabilityNames {
                switch BundleLoader.load(name) {
                case .success(let exports): errors += c.sectionErrors(name, fields: exports.configFields)
                case .failure(let f): Out.line("note: capabilities.\(name) not checked: \(f.description)")
                }
            }
            if !errors.isEmpty { throw ConfigLoader.Failure.invalid(errors) }
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
