import Glibc
import Support

/// Finds, reads, parses and validates the config file.
public enum ConfigLoader {
    public enum Failure: Error, Sendable, CustomStringConvertible {
        case unreadable(path: String, reason: String)
        case syntax(JSON5SyntaxError)
        case invalid([ConfigError])

        public var description: String {
            switch self {
            case .unreadable(let path, let reason): return "\(path): cannot read the config file: \(reason)"
            case .syntax(let e): return "\(e.description) (JSON5 syntax error)"
            case .invalid(let errs): return errs.map(\.description).joined(separator: "\n")
            }
        }
    }

    /// The system-wide config a packaged daemon reads.
    public static let systemConfigFile = "/etc/openclaw-node/config.json5"

    /// The one lookup rule every command uses: `--config FILE`, else the user's
    /// `$XDG_CONFIG_HOME/openclaw-node/config.json5` (or ~/.config/…), else
    /// `/etc/openclaw-node/config.json5`, each only if it exists; else nil (built-in defaults).
    /// Never the working directory: which gateway the node trusts must not depend on the folder a
    /// command happens to run in.
    public static func resolvePath(explicit: String?, environment env: [String: String] = NodeSecrets.environment,
                                   systemFile: String = systemConfigFile) -> String? {
        if let explicit { return explicit }
        let base = env["XDG_CONFIG_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil }
            ?? NodeConfig.expandHome("~/.config", env)
        return [base + "/openclaw-node/config.json5", systemFile].first { FileSystem.exists($0) }
    }

    /// `catalog`: the capabilities whose sections the file may have (the installed bundles).
    /// The file's drop-ins (`config.d/*.json5` beside it, ConfigDropIns) are merged over it.
    public static func load(path: String?, environment env: [String: String] = NodeSecrets.environment,
                            catalog: BundleCatalog = .current) throws(Failure) -> NodeConfig {
        guard let path else { return defaults(env, catalog) }
        let doc = try document(path)
        // What the files' values name as ${NAME} is a secret from now on: out of the environment children get.
        NodeSecrets.withhold(NodeSecrets.references(in: doc.plain))
        return try build(doc, file: path, environment: env.merging(NodeSecrets.secrets) { _, held in held }, catalog: catalog)
    }

    /// The main file with its drop-ins merged over it, every value knowing its file; not validated.
    /// The first file that cannot be read or parsed stops it (its error names the file).
    public static func document(_ path: String) throws(Failure) -> JSON5Node {
        var doc = try parsed(path)
        for dropIn in ConfigDropIns.files(for: path) {
            let next = try parsed(dropIn)
            guard case .object = next.kind else {
                throw .invalid([ConfigError(file: dropIn, location: next.location, keyPath: "",
                                            reason: "a drop-in must be an object ({ … }) like the main file, found \(next.typeName)")])
            }
            doc = ConfigDropIns.merge(doc, next)
        }
        return doc
    }

    /// Every file `load(path:)` reads, main file first.
    public static func files(_ path: String) -> [String] { [path] + ConfigDropIns.files(for: path) }

    private static func parsed(_ path: String) throws(Failure) -> JSON5Node {
        let text = try text(path)
        do { return try JSON5Parser.parse(text, file: path) } catch { throw .syntax(error) }
    }

    /// The built-in config with the environment's overrides (no file).
    private static func defaults(_ env: [String: String], _ catalog: BundleCatalog) -> NodeConfig {
        var c = NodeConfig(environment: env, catalog: catalog)
        c.applyEnvironment(env)
        return c
    }

    /// The file's text, or why it cannot be read as a config (missing, unreadable, not UTF-8).
    private static func text(_ path: String) throws(Failure) -> String {
        let data: [UInt8]
        do { data = try FileSystem.contents(path) }
        catch {
            let reason = FileSystem.exists(path) ? "not readable (\(error.reason))" : "no such file"
            throw .unreadable(path: path, reason: reason)
        }
        guard let text = String(validating: data, as: UTF8.self) else { throw .syntax(invalidUTF8(data, file: path)) }
        return text
    }

    /// The state directory (where the control socket is) of a daemon running with the file at
    /// `path`, read without the installed bundles' manifests: a client that only talks to the
    /// daemon needs no more, and reading the ten manifests was a fifth of `invoke`'s start. nil
    /// when the file cannot be read or parsed (`load` then says why).
    public static func stateDir(path: String?, environment env: [String: String] = NodeSecrets.environment) -> String? {
        let none = BundleCatalog(manifests: [])
        guard let path else { return defaults(env, none).stateDir }
        guard let doc = try? document(path) else { return nil }
        return NodeConfig(document: doc.plain, sourceFile: path, environment: env, catalog: none).stateDir
    }

    public static func parse(_ text: String, file: String, environment env: [String: String] = [:],
                             catalog: BundleCatalog = .current) throws(Failure) -> NodeConfig {
        let doc: JSON5Node
        do { doc = try JSON5Parser.parse(text, file: file) } catch { throw .syntax(error) }
        return try build(doc, file: file, environment: env, catalog: catalog)
    }

    private static func build(_ doc: JSON5Node, file: String, environment env: [String: String],
                              catalog: BundleCatalog) throws(Failure) -> NodeConfig {
        let errors = ConfigValidator.validate(doc, file: file, bundles: catalog.manifests, refused: catalog.refused.map(\.name))
        if !errors.isEmpty { throw .invalid(errors) }
        return NodeConfig(document: doc.plain, sourceFile: file, environment: env, catalog: catalog)
    }

    /// A config file is UTF-8 text (JSON5): a byte that is not is a syntax error at its position.
    static func invalidUTF8(_ data: [UInt8], file: String) -> JSON5SyntaxError {
        var line = 1, column = 1, i = data.startIndex
        while i < data.endIndex {
            let b = data[i]
            let len = b < 0x80 ? 1 : b >> 5 == 0b110 ? 2 : b >> 4 == 0b1110 ? 3 : b >> 3 == 0b11110 ? 4 : 0
            let end = i + len
            guard len > 0, end <= data.endIndex, String(validating: data[i..<end], as: UTF8.self) != nil else { break }
            if b == 0x0A { line += 1; column = 1 } else { column += 1 }
            i = end
        }
        let byte = i < data.endIndex ? "0x\(data[i].upperHex())" : "end of file"
        return JSON5SyntaxError(file: file, location: SourceLocation(line: line, column: column),
                                reason: "invalid UTF-8 (byte \(byte)); the config file must be UTF-8 text")
    }
}
