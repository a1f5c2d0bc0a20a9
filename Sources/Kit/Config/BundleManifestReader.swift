import Support

/// Reads a bundle manifest (JSON5). Its shape is checked with the config file's own validator, so a
/// mistake in a manifest is reported like one in config.json5: file:line:col, key path, "did you
/// mean". Then the rules a schema cannot say: required keys, a name that matches the file, config
/// defaults of the declared type, integer ranges, known enumerations.
public enum BundleManifestReader {
    public struct Invalid: Error, Sendable, CustomStringConvertible {
        public let problems: [String]
        public var description: String { problems.joined(separator: "\n") }
    }

    /// `expectedName`: the name the file name gives (nil for the built-in manifest).
    public static func read(_ text: String, file: String, expectedName: String?, library: String?) throws(Invalid) -> BundleManifest {
        let doc: JSON5Node
        do { doc = try JSON5Parser.parse(text, file: file) } catch { throw Invalid(problems: [error.description]) }
        let shape = ConfigValidator.check(doc, against: .object(schema), path: "", file: file)
        if !shape.isEmpty { throw Invalid(problems: shape.map(\.description)) }
        var problems: [String] = []
        func fail(_ node: JSON5Node, _ path: String, _ reason: String) {
            problems.append(ConfigError(file: file, location: node.location, keyPath: path, reason: reason).description)
        }
        let top = members(doc)
        func required(_ key: String, in m: [JSON5Node.Member], at node: JSON5Node, _ path: String) -> JSON5Node? {
            if let v = m.first(where: { $0.key == key })?.value { return v }
            fail(node, path, "missing key \"\(key)\"")
            return nil
        }
        let nameNode = required("name", in: top, at: doc, "")
        let name = nameNode?.plain.stringValue ?? ""
        if let nameNode, !isBundleName(name) {
            fail(nameNode, "name", "\"\(name)\" is not a bundle name (lower-case letters, digits and -, starting with a letter)")
        } else if let nameNode, let expectedName, name != expectedName {
            fail(nameNode, "name", "the manifest is for \"\(name)\" but its file is named for \"\(expectedName)\"")
        }
        let summary = required("summary", in: top, at: doc, "")?.plain.stringValue ?? ""
        let enabled = value("enabledByDefault", top)?.boolValue ?? false

        var config: [ConfigField] = []
        for m in members(value(node: "config", top)) {
            if let f = field(m, path: "config.\(m.key)", fail: fail) { config.append(f) }
        }

        var commands: [BundleManifest.Command] = []
        let commandsNode = required("commands", in: top, at: doc, "")
        for m in members(commandsNode) {
            let path = "commands.\(m.key)"
            if !isCommandName(m.key) { fail(m.value, path, "\"\(m.key)\" is not a command name (words of letters and digits joined by dots, e.g. \"device.info\")") }
            let row = members(m.value)
            var params: [ConfigField] = []
            for p in members(value(node: "params", row)) {
                if p.value.plain.stringValue != nil {
                    fail(p.value, "\(path).params.\(p.key)", "a param is described as { type: …, doc: … } (as config keys are), not as a line of text")
                } else if let f = field(p, path: "\(path).params.\(p.key)", param: true, fail: fail) {
                    params.append(f)
                }
            }
            commands.append(BundleManifest.Command(
                name: m.key, summary: required("summary", in: row, at: m.value, path)?.plain.stringValue ?? "",
                params: params,
                requiresForeground: value("foreground", row)?.boolValue ?? false,
                dangerous: value("dangerous", row)?.boolValue ?? false,
                permission: value("permission", row)?.stringValue,
                gateway: value("gateway", row)?.stringValue.flatMap(BundleManifest.GatewayPolicy.init(rawValue:)) ?? .allowlist,
                olderGateway: value("olderGateway", row)?.stringValue.flatMap(BundleManifest.GatewayPolicy.init(rawValue:)) ?? .allowlist,
                duplex: value("duplex", row)?.boolValue ?? false,
                structuredResult: value("structuredResult", row)?.boolValue ?? false))
        }
        if let commandsNode, commands.isEmpty, value("cli", top) == nil {
            fail(commandsNode, "commands", "a bundle must declare at least one command")
        }

        var packages = PackageNeeds()
        if let block = value(node: "packages", top) {
            for m in members(block) {
                for item in m.value.plain.arrayValue ?? [] {
                    if let s = item.stringValue, PackageNeeds.entry(s) == nil {
                        fail(m.value, "packages.\(m.key)", "\"\(s)\" is not a Debian package entry: a name, alternatives \"a | b\", optionally [\(PackageNeeds.releases.joined(separator: " "))]")
                    }
                }
            }
            let p = block.plain
            func list(_ k: String) -> [String] { p[k]?.arrayValue?.compactMap(\.stringValue) ?? [] }
            packages = PackageNeeds(build: list("build"), depends: list("depends"), recommends: list("recommends"),
                                    suggests: list("suggests"), test: list("test"))
        }
        var programs: [BundleManifest.Program] = []
        for m in members(value(node: "programs", top)) {
            let row = members(m.value)
            let package = value("package", row)?.stringValue, from = value("from", row)?.stringValue
            if m.key.isEmpty || (m.key.contains("/") && !m.key.hasPrefix("/")) || m.key.hasPrefix("-") || m.key.contains(where: { $0 == " " }) {
                fail(m.value, "programs.\(m.key)", "a program is a name looked up on PATH (no slash) or an absolute path, without spaces")
            } else if (package == nil) == (from == nil) {
                fail(m.value, "programs.\(m.key)", "say where the program comes from: either package (the Debian package that ships it) or from (anywhere else)")
            } else if let package, PackageNeeds.entry(package)?.text != package || package.contains("|") {
                fail(m.value, "programs.\(m.key).package", "\"\(package)\" is not one Debian package name")
            } else if value("for", row)?.stringValue?.isEmpty != false {
                fail(m.value, "programs.\(m.key)", "missing key \"for\": what the bundle runs it for")
            } else {
                programs.append(.init(name: m.key, package: package, from: from, purpose: value("for", row)?.stringValue ?? "",
                                      optional: value("optional", row)?.boolValue ?? false))
            }
        }
        let doctor = members(value(node: "doctor", top)).map { BundleManifest.DoctorCheck(id: $0.key, doc: $0.value.plain.stringValue ?? "") }
        let cli = members(value(node: "cli", top)).map { m in
            BundleManifest.CLICommand(name: m.key, summary: m.value.plain["summary"]?.stringValue ?? "",
                                      help: m.value.plain["help"]?.stringValue ?? "")
        }
        if !problems.isEmpty { throw Invalid(problems: problems) }
        return BundleManifest(name: name, summary: summary, enabledByDefault: enabled, library: library, config: config,
                              commands: commands,
                              packages: packages, programs: programs,
                              doctor: doctor, cli: cli, file: file)
    }

    /// One `config.<key>` entry as a config field; nil (with a problem) when it does not make sense.
    private static func field(_ m: JSON5Node.Member, path: String, depth: Int = 0, param: Bool = false,
                              fail: (JSON5Node, String, String) -> Void) -> ConfigField? {
        // Entries below the top level (an object's fields, a command's params) are checked here:
        // the manifest's own schema stops one level down.
        if let wrong = ConfigValidator.check(m.value, against: fieldSchema, path: path, file: "").first {
            fail(m.value, wrong.keyPath, wrong.reason); return nil
        }
        let o = members(m.value)
        guard let doc = value("doc", o)?.stringValue else { fail(m.value, path, "missing key \"doc\""); return nil }
        guard let type = type(m.value, path: path, depth: depth, param: param, fail: fail) else { return nil }
        var defaultValue: JSONValue?
        if let d = o.first(where: { $0.key == "default" })?.value {
            let wrong = ConfigValidator.check(d, against: type, path: "\(path).default", file: "")
            if let first = wrong.first { fail(d, "\(path).default", "the default does not fit the type: \(first.reason)"); return nil }
            defaultValue = d.plain
        }
        var field = ConfigField(m.key, type, value: defaultValue, defaultDoc: value("defaultDoc", o)?.stringValue, doc,
                                restartsNode: value("reload", o)?.stringValue == "restart-node")
        field.hiddenFile = value("hidden", o)?.boolValue ?? false
        if let required = value("required", o)?.boolValue {
            guard param else { fail(m.value, "\(path).required", "only a command's params can be required"); return nil }
            if required && defaultValue != nil { fail(m.value, "\(path).required", "a param with a default is not required"); return nil }
            field.required = required
        }
        if let clamp = value("clamp", o)?.boolValue {
            guard param else { fail(m.value, "\(path).clamp", "only a command's params are clamped"); return nil }
            switch type { case .integer, .number: break
            default: fail(m.value, "\(path).clamp", "only an integer or number is clamped"); return nil }
            field.clamps = clamp
        }
        return field
    }

    /// How deep objects and maps may nest in a manifest (an MCP server's `toolFilter` is three down).
    static let maxDepth = 3

    /// The type a `{type, …}` entry describes (a key's, or a map's `of`).
    private static func type(_ node: JSON5Node, path: String, depth: Int, param: Bool = false,
                             fail: (JSON5Node, String, String) -> Void) -> ConfigType? {
        let o = members(node)
        guard let typeName = value("type", o)?.stringValue else { fail(node, path, "missing key \"type\""); return nil }
        switch typeName {
        case "string": return .string
        case "bool": return .bool
        case "stringArray": return .stringArray
        case "domainName": return .domainName
        case "hostPort": return .hostPort
        case "any": return .any
        case "integer":
            guard let lo = value("min", o)?.intValue, let hi = value("max", o)?.intValue, lo <= hi else {
                fail(node, path, "an integer key needs \"min\" and \"max\" (min ≤ max)"); return nil
            }
            return .integer(lo...hi)
        case "number":
            guard let lo = value("min", o)?.doubleValue, let hi = value("max", o)?.doubleValue, lo <= hi else {
                fail(node, path, "a number key needs \"min\" and \"max\" (min ≤ max)"); return nil
            }
            return .number(lo...hi)
        case "array":
            guard depth < maxDepth else { fail(node, path, "objects and arrays nest \(maxDepth) levels deep at most in a manifest"); return nil }
            guard let of = value(node: "of", o) else { fail(node, path, "an array needs \"of\": { type: … } (the type of its items)"); return nil }
            return type(of, path: "\(path).of", depth: depth + 1, param: param, fail: fail).map { .list($0) }
        case "enum":
            guard let values = value("values", o)?.arrayValue?.compactMap(\.stringValue), !values.isEmpty else {
                fail(node, path, "an enum key needs \"values\": [\"…\"]"); return nil
            }
            return .enumeration(values)
        case "object", "map":
            guard depth < maxDepth else { fail(node, path, "objects and maps nest \(maxDepth) levels deep at most in a manifest"); return nil }
            if typeName == "map" {
                guard let of = value(node: "of", o) else { fail(node, path, "a map needs \"of\": { type: … } (the type of its values)"); return nil }
                return type(of, path: "\(path).of", depth: depth + 1, param: param, fail: fail).map { .map($0) }
            }
            var sub: [ConfigField] = []
            for f in members(value(node: "fields", o)) {
                if let field = field(f, path: "\(path).fields.\(f.key)", depth: depth + 1, param: param, fail: fail) { sub.append(field) }
            }
            guard let oneOf = value("oneOf", o)?.arrayValue?.compactMap(\.stringValue) else { return .object(sub) }
            if let unknown = oneOf.first(where: { k in !sub.contains { $0.key == k } }) {
                fail(node, "\(path).oneOf", "\"\(unknown)\" is not one of the object's fields"); return nil
            }
            return .exactlyOne(oneOf, of: .object(sub))
        default:
            fail(node, "\(path).type", "unknown type \"\(typeName)\"; use \(typeNames.joined(separator: ", "))")
            return nil
        }
    }

    static let typeNames = ["string", "bool", "integer", "number", "enum", "stringArray", "array", "domainName", "hostPort", "object", "map", "any"]

    private static func members(_ node: JSON5Node?) -> [JSON5Node.Member] {
        if let node, case .object(let m) = node.kind { return m }
        return []
    }

    private static func value(node key: String, _ m: [JSON5Node.Member]) -> JSON5Node? { m.last { $0.key == key }?.value }
    private static func value(_ key: String, _ m: [JSON5Node.Member]) -> JSONValue? { value(node: key, m)?.plain }

    static func isBundleName(_ s: String) -> Bool {
        guard let first = s.unicodeScalars.first, ("a"..."z").contains(first), s.count <= 40 else { return false }
        return s.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "-" }
    }

    static func isCommandName(_ s: String) -> Bool {
        let words = s.split(separator: ".", omittingEmptySubsequences: false)
        return words.count >= 2 && s.count <= 100 && words.allSatisfy { w in
            guard let first = w.unicodeScalars.first, first.properties.isAlphabetic else { return false }
            return w.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0)) }
        }
    }

    /// One `{type, doc, …}` entry: a config key, an object's field, a command's param.
    static let fieldSchema: ConfigType = {
        let leaf: [ConfigField] = [
            ConfigField("type", .enumeration(typeNames), "the value's type"),
            ConfigField("doc", .string, "what the key means (config.json5, config check)"),
            ConfigField("default", .any, "the default value, when it is a constant"),
            ConfigField("defaultDoc", .string, "the default in words, when it is not a constant (\"$DISPLAY\")"),
            ConfigField("min", .number(-Double.greatestFiniteMagnitude...Double.greatestFiniteMagnitude), "integer, number: the smallest value"),
            ConfigField("max", .number(-Double.greatestFiniteMagnitude...Double.greatestFiniteMagnitude), "integer, number: the largest value"),
            ConfigField("required", .bool, "a command's param: the caller must send it"),
            ConfigField("clamp", .bool, "a command's integer or number param: brought into min..max instead of refused"),
            ConfigField("values", .stringArray, "enum: the allowed strings"),
            ConfigField("reload", .enumeration(["restart-capability", "restart-node"]), "what a config reload does when the key changes"),
            ConfigField("hidden", .bool, "string: a file holding a secret, hidden from sandboxes and file commands like the config"),
        ]
        // Nested entries are checked by the reader itself (depth, `of`, `oneOf`); here only their
        // outer shape, so the manifest's own check stays one level deep.
        let nested: [ConfigField] = [
            ConfigField("fields", .map(.any), "object: its keys"),
            ConfigField("oneOf", .stringArray, "object: keys of which it must have exactly one"),
            ConfigField("of", .any, "map, array: the type of its values or items ({type, …})"),
        ]
        return .object(leaf + nested)
    }()

    /// The manifest's own shape.
    static let schema: [ConfigField] = {
        let policies = BundleManifest.GatewayPolicy.allCases.map(\.rawValue)
        return [
            ConfigField("name", .string, "the capability's name: caps entry, config section, libopenclaw-<name>.so"),
            ConfigField("summary", .string, "one line for --help, caps and config.json5"),
            ConfigField("enabledByDefault", .bool, "whether capabilities.<name>.enabled defaults to true"),
            ConfigField("packages", .object([
                ConfigField("build", .stringArray, "Debian packages it needs to be compiled"),
                ConfigField("depends", .stringArray, "Debian packages the bundle cannot load without"),
                ConfigField("recommends", .stringArray, "Debian packages it uses when present"),
                ConfigField("suggests", .stringArray, "Debian packages it can use"),
                ConfigField("test", .stringArray, "Debian packages its tests and benchmarks need besides"),
            ]), "where its libraries come from"),
            ConfigField("programs", .map(.object([
                ConfigField("package", .string, "the Debian package that ships it"),
                ConfigField("from", .string, "where it comes from when no Debian package ships it"),
                ConfigField("for", .string, "what the bundle runs it for (required)"),
                ConfigField("optional", .bool, "only some devices need it, or it only improves a result (alternatives, a Pi's camera programs): doctor does not fail when it is missing"),
            ])), "the programs it runs (looked up on PATH): doctor says which are installed"),
            ConfigField("config", .map(fieldSchema), "the keys of capabilities.<name> besides enabled"),
            ConfigField("commands", .map(.object([
                ConfigField("summary", .string, "one line for caps and the docs"),
                ConfigField("params", .map(.any), "each param: {type, doc, default?, required?, …} as for config keys"),
                ConfigField("foreground", .bool, "refused while nobody is at the device"),
                ConfigField("dangerous", .bool, "in the gateway's dangerous set"),
                ConfigField("permission", .string, "the connect frame's permissions key it needs"),
                ConfigField("gateway", .enumeration(policies), "the policy of gateways 2026.7.2 and later"),
                ConfigField("olderGateway", .enumeration(policies), "the policy of older gateways"),
                ConfigField("duplex", .bool, "a long-running command that streams progress and takes input (heartbeats while quiet)"),
                ConfigField("structuredResult", .bool, "its result goes to the gateway as a payload object, not payloadJSON text"),
            ])), "the command rows"),
            ConfigField("doctor", .map(.string), "the checks doctor runs: id → what it checks"),
            ConfigField("cli", .map(.object([
                ConfigField("summary", .string, "one line for --help"),
                ConfigField("help", .string, "the subcommand's --help text"),
            ])), "openclaw-node subcommands the bundle serves"),
        ]
    }()
}
