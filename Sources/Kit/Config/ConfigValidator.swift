import Support

/// A config file that parses as JSON5 but does not fit the schema.
public struct ConfigError: Error, Sendable, Equatable, CustomStringConvertible {
    public let file: String
    public let location: SourceLocation
    public let keyPath: String
    public let reason: String
    public var description: String { "\(file):\(location.line):\(location.column): \(keyPath.isEmpty ? "" : "\(keyPath): ")\(reason)" }
}

/// Checks a parsed JSON5 document against `ConfigSchema` (the core's keys and the installed bundles'): unknown keys (with a "did you mean"),
/// wrong types, out-of-range values. Returns every problem, not just the first.
enum ConfigValidator {
    static func validate(_ node: JSON5Node, file: String, bundles: [BundleManifest], refused: [String] = []) -> [ConfigError] {
        guard case .object = node.kind else {
            return [ConfigError(file: file, location: node.location, keyPath: "",
                                reason: "the config must be an object ({ … }), found \(node.typeName)")]
        }
        var errors: [ConfigError] = []
        check(node, against: .object(ConfigSchema.root(bundles: bundles, refused: refused)), path: "", file: file, into: &errors)
        return errors
    }

    static func check(_ node: JSON5Node, against type: ConfigType, path: String, file: String) -> [ConfigError] {
        var errors: [ConfigError] = []
        check(node, against: type, path: path, file: file, into: &errors)
        return errors
    }

    private static func check(_ node: JSON5Node, against type: ConfigType, path: String, file: String,
                              into errors: inout [ConfigError]) {
        // A merged document (the main file and its drop-ins) holds values of several files: each
        // error names the file of the value it is about.
        let file = Self.file(of: node, else: file)
        func fail(_ reason: String, at loc: SourceLocation? = nil) {
            errors.append(ConfigError(file: file, location: loc ?? node.location, keyPath: path, reason: reason))
        }
        switch (type, node.kind) {
        case (.any, _): return
        case (.exactlyOne(let keys, let inner), .object(let members)):
            check(node, against: inner, path: path, file: file, into: &errors)
            let present = keys.filter { k in members.contains { $0.key == k } }
            if present.count != 1 {
                fail(present.isEmpty ? "needs one of \(keys.joined(separator: " or "))"
                                     : "has \(present.joined(separator: " and ")); it may have only one of them")
            }
        case (.exactlyOne(_, let inner), _):
            check(node, against: inner, path: path, file: file, into: &errors)
        case (.string, .string), (.bool, .bool): return
        case (.domainName, .string(let s)):
            do { _ = try DNSName(text: s) } catch { fail("\"\(s)\" is not a domain name: \(error.description)") }
        case (.hostPort, .string(let s)):
            if HostPort(s, defaultPort: 53) == nil { fail("\"\(s)\" is not host or host:port (port 1-65535), e.g. \"127.0.0.1:5354\"") }
        case (.enumeration(let allowed), .string(let s)):
            if !allowed.contains(s) {
                let hint = Suggest.closest(to: s, in: allowed).map { " Did you mean \"\($0)\"?" } ?? ""
                fail("\"\(s)\" is not one of \(allowed.map { "\"\($0)\"" }.joined(separator: ", ")).\(hint)")
            }
        case (.integer(let range), .number(let n)):
            if n.rounded() != n || !n.isFinite { fail("expected an integer, found \(n)") }
            // Compared as Double: Int(n) traps for |n| ≥ 2^63 (a 1e19 in a config killed the process).
            else if n < Double(range.lowerBound) || n > Double(range.upperBound) {
                fail("must be between \(range.lowerBound) and \(range.upperBound), found \(abs(n) < 1e15 ? String(Int(n)) : String(n))")
            }
        case (.number(let range), .number(let n)):
            if !n.isFinite || n < range.lowerBound || n > range.upperBound {
                fail("must be between \(NumberText.plain(range.lowerBound)) and \(NumberText.plain(range.upperBound)), found \(NumberText.plain(n))")
            }
        case (.stringArray, .array(let items)):
            for (i, item) in items.enumerated() {
                if case .string = item.kind { continue }
                errors.append(ConfigError(file: Self.file(of: item, else: file), location: item.location, keyPath: "\(path)[\(i)]",
                                          reason: "expected a string, found \(item.typeName)"))
            }
        case (.object(let fields), .object(let members)):
            let known = Dictionary(fields.map { ($0.key, $0) }, uniquingKeysWith: { a, _ in a })
            for m in members {
                let sub = path.isEmpty ? m.key : "\(path).\(m.key)"
                guard let field = known[m.key] else {
                    let hint = Suggest.closest(to: m.key, in: fields.map(\.key)).map { " Did you mean \"\($0)\"?" } ?? ""
                    let valid = " Known keys here: \(fields.map(\.key).joined(separator: ", "))."
                    errors.append(ConfigError(file: Self.file(of: m.value, else: file), location: m.keyLocation, keyPath: sub,
                                              reason: "unknown key.\(hint)\(hint.isEmpty ? valid : "")"))
                    continue
                }
                check(m.value, against: field.type, path: sub, file: file, into: &errors)
            }
        case (.list(let itemType), .array(let items)):
            for (i, item) in items.enumerated() {
                check(item, against: itemType, path: "\(path)[\(i)]", file: file, into: &errors)
            }
        case (.map(let valueType), .object(let members)):
            for m in members {
                check(m.value, against: valueType, path: "\(path).\(m.key)", file: file, into: &errors)
            }
        default:
            fail("expected \(type.noun), found \(node.typeName)")
        }
    }

    /// The file a value came from; the caller's name for a document parsed without one.
    private static func file(of node: JSON5Node, else fallback: String) -> String {
        node.file.isEmpty || node.file == JSON5Parser.unnamed ? fallback : node.file
    }
}
