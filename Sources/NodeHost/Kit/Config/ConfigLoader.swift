import Foundation
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

    /// `--config FILE`, else `$XDG_CONFIG_HOME/openclaw-node/config.json5` (or ~/.config/…) if it
    /// exists, else nil (defaults).
    public static func resolvePath(explicit: String?, environment env: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        if let explicit { return explicit }
        let base = env["XDG_CONFIG_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil }
            ?? NodeConfig.expandHome("~/.config", env)
        let candidate = base + "/openclaw-node/config.json5"
        return FileManager.default.fileExists(atPath: candidate) ? candidate : nil
    }

    public static func load(path: String?, environment env: [String: String] = ProcessInfo.processInfo.environment) throws(Failure) -> NodeConfig {
        guard let path else {
            var c = NodeConfig(environment: env)
            c.applyEnvironment(env)
            return c
        }
        let text: String
        do { text = try String(contentsOfFile: path, encoding: .utf8) }
        catch {
            let reason = FileManager.default.fileExists(atPath: path) ? "not readable as UTF-8 text" : "no such file"
            throw .unreadable(path: path, reason: reason)
        }
        return try parse(text, file: path, environment: env)
    }

    public static func parse(_ text: String, file: String, environment env: [String: String] = [:]) throws(Failure) -> NodeConfig {
        let doc: JSON5Node
        do { doc = try JSON5Parser.parse(text, file: file) } catch { throw .syntax(error) }
        let errors = ConfigValidator.validate(doc, file: file)
        if !errors.isEmpty { throw .invalid(errors) }
        var sections: [String: JSON5Node] = [:]
        if case .object(let top) = doc.kind, let caps = top.first(where: { $0.key == "capabilities" })?.value,
           case .object(let members) = caps.kind {
            for m in members { sections[m.key] = m.value }
        }
        return NodeConfig(document: doc.plain, sourceFile: file, environment: env, sectionNodes: sections)
    }
}
