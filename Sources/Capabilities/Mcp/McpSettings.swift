import Config
import Kit
import Support

/// One entry of `capabilities.mcp.servers`, as the bundle runs it. The config check has already
/// made sure of the types and that each has exactly one of `command` and `url`.
struct McpServerConfig: Sendable, Equatable {
    enum Transport: Sendable, Equatable {
        case stdio(command: String, args: [String], env: [String: String], cwd: String?, sandbox: Sandbox.Kind, writable: [String], network: Bool)
        case http(url: String, headers: [String: String], caFile: String?)
    }
    let name: String
    let transport: Transport
    let include: [String]
    let exclude: [String]
    let timeout: Duration
    let connectionTimeout: Duration

    /// Whether `tool` is offered: it matches an include glob (when there are any) and no exclude glob.
    func offers(_ tool: String) -> Bool {
        (include.isEmpty || include.contains { Glob.matches($0, tool) }) && !exclude.contains { Glob.matches($0, tool) }
    }
}

/// What `capabilities.mcp` says: the servers to run, and the ones skipped with why.
struct McpSettings: Sendable {
    var servers: [McpServerConfig] = []
    /// (server, why) for entries that are switched off or cannot be served (OAuth, a bad name, an
    /// unresolved ${VAR}); logged once and shown by `mcp list` and doctor.
    var skipped: [(name: String, why: String)] = []

    init(_ section: BundleSection, environment: [String: String]) {
        let entries = section.settings["servers"]?.objectValue ?? [:]
        // In name order, as upstream's host processes them (the published catalogue's order).
        for name in entries.keys.sorted() {
            let o = entries[name]?.objectValue ?? [:]
            switch Self.server(name, o, environment: environment) {
            case .success(let s): servers.append(s)
            case .failure(let why): skipped.append((name, why.message))
            }
        }
    }

    struct Skip: Error { let message: String }

    static func server(_ name: String, _ o: [String: JSONValue], environment: [String: String]) -> Result<McpServerConfig, Skip> {
        if o["enabled"]?.boolValue == false { return .failure(Skip(message: "disabled (enabled: false)")) }
        // Names become the first part of tool names and the `server` of calls: kept plain.
        guard !name.isEmpty, name != "__proto__", name.unicodeScalars.allSatisfy({ $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "_" || $0 == "-") }) else {
            return .failure(Skip(message: "the name \"\(name)\" is not letters, digits, _ and - only; rename it"))
        }
        if o["auth"]?.stringValue == "oauth" || o["oauth"] != nil {
            return .failure(Skip(message: "an OAuth server, which this node does not sign in to; give it a token in headers instead"))
        }
        let strings = { (key: String) in o[key]?.arrayValue?.compactMap(\.stringValue) ?? [] }
        let filter = o["toolFilter"]?.objectValue ?? [:]
        let transport: McpServerConfig.Transport
        if let command = o["command"]?.stringValue {
            let env = (o["env"]?.objectValue ?? [:]).compactMapValues(\.stringValue)
            transport = .stdio(command: command, args: strings("args"), env: env, cwd: o["cwd"]?.stringValue,
                               sandbox: o["sandbox"]?.stringValue.flatMap(Sandbox.Kind.init(rawValue:)) ?? .none,
                               writable: strings("sandboxWritable"), network: o["sandboxNetwork"]?.boolValue ?? true)
        } else if let url = o["url"]?.stringValue {
            guard let parts = URLParts(string: url), let host = parts.host,
                  parts.scheme == "https" || (parts.scheme == "http" && ResolvedAddress.isLoopback(host)) else {
                return .failure(Skip(message: "url \"\(url)\" must be https://, or http:// to a loopback address"))
            }
            var headers: [String: String] = [:]
            for (key, value) in (o["headers"]?.objectValue ?? [:]).compactMapValues(\.stringValue) {
                switch EnvReference.expand(value, environment) {
                case .success(let v): headers[key] = v
                case .failure(let missing):
                    return .failure(Skip(message: "header \(key) names ${\(missing.name)}, which the daemon's environment does not set"))
                }
            }
            transport = .http(url: url, headers: headers, caFile: o["caFile"]?.stringValue)
        } else {
            return .failure(Skip(message: "neither command nor url"))
        }
        return .success(McpServerConfig(name: name, transport: transport,
                                        include: filter["include"]?.arrayValue?.compactMap(\.stringValue) ?? [],
                                        exclude: filter["exclude"]?.arrayValue?.compactMap(\.stringValue) ?? [],
                                        timeout: .milliseconds(o["timeoutMs"]?.intValue ?? 120_000),
                                        connectionTimeout: .milliseconds(o["connectionTimeoutMs"]?.intValue ?? 30_000)))
    }
}

/// `${NAME}` references in header values, replaced by the daemon's environment (a token kept out
/// of the config file). `$$` is a literal `$`.
enum EnvReference {
    struct Missing: Error, Equatable { let name: String }

    static func expand(_ text: String, _ environment: [String: String]) -> Result<String, Missing> {
        var out = "", rest = Substring(text)
        while let dollar = rest.firstIndex(of: "$") {
            out += rest[..<dollar]
            let after = rest[rest.index(after: dollar)...]
            if after.hasPrefix("$") { out += "$"; rest = after.dropFirst(); continue }
            guard after.hasPrefix("{"), let close = after.firstIndex(of: "}") else { out += "$"; rest = after; continue }
            let name = String(after[after.index(after: after.startIndex)..<close])
            guard let value = environment[name] else { return .failure(Missing(name: name)) }
            out += value
            rest = after[after.index(after: close)...]
        }
        return .success(out + rest)
    }
}

/// Tool-name globs of `toolFilter`: `*` any run of characters, `?` one character.
enum Glob {
    static func matches(_ pattern: String, _ text: String) -> Bool {
        let p = Array(pattern.unicodeScalars), t = Array(text.unicodeScalars)
        var pi = 0, ti = 0, star = -1, mark = 0
        while ti < t.count {
            if pi < p.count, p[pi] == "?" || p[pi] == t[ti] { pi += 1; ti += 1 }
            else if pi < p.count, p[pi] == "*" { star = pi; mark = ti; pi += 1 }
            else if star >= 0 { pi = star + 1; mark += 1; ti = mark }
            else { return false }
        }
        while pi < p.count, p[pi] == "*" { pi += 1 }
        return pi == p.count
    }
}
