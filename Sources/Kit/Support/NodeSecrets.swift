import Glibc

/// The secrets the node may be given in its environment: the gateway credentials
/// (`OPENCLAW_GATEWAY_TOKEN`, `OPENCLAW_GATEWAY_PASSWORD`) and every variable the config names as
/// `${NAME}` (an MCP server's Bearer token). Taken out of the process environment — so that no
/// child inherits them: Chromium, plugins, launched applications, system.run, MCP servers, whatever
/// a library spawns — and kept here for the config, which reads them on every load and reload.
/// Their bytes in the process's initial environment block are overwritten too: unsetenv only
/// unlinks the entry, and /proc/<pid>/environ shows that block as it was.
public enum NodeSecrets {
    public static let keys = ["OPENCLAW_GATEWAY_TOKEN", "OPENCLAW_GATEWAY_PASSWORD"]

    /// Names a config may reference that are the session's, not secrets: never withheld (children
    /// need them, and `${HOME}` in a header is no secret).
    static let sessionNames: Set<String> = ["HOME", "USER", "LOGNAME", "PATH", "SHELL", "LANG", "LANGUAGE", "TZ", "TERM", "PWD",
                                            "TMPDIR", "DISPLAY", "WAYLAND_DISPLAY", "DBUS_SESSION_BUS_ADDRESS", "XAUTHORITY",
                                            "SSH_AUTH_SOCK", "GNUPGHOME", "JAVA_HOME", "http_proxy", "https_proxy", "no_proxy",
                                            "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY", "all_proxy"]
    static func isSessionName(_ name: String) -> Bool {
        sessionNames.contains(name) || ["LC_", "XDG_", "PULSE_", "PIPEWIRE_"].contains { name.hasPrefix($0) }
    }

    private static let held = Locked<[String: String]>([:])

    /// Moves the gateway secrets and `names` from the environment into memory (idempotent; a later
    /// value wins), wiping each `NAME=value` string where it was.
    public static func withhold(_ names: [String] = []) {
        ProcessEnvironment.lock.withLock { _ in held.withLock { held in
            for key in keys + names where !isSessionName(key) {
                guard let value = getenv(key) else { continue }
                held[key] = String(cString: value)
                let strings = entries(key)
                unsetenv(key)
                for s in strings { memset(s, 0, strlen(s)) }
            }
        } }
    }

    /// The `KEY=value` strings of `key` in `environ` (the initial block's, or setenv's copies).
    private static func entries(_ key: String) -> [UnsafeMutablePointer<CChar>] {
        let prefix = Array((key + "=").utf8CString.dropLast())
        var out: [UnsafeMutablePointer<CChar>] = []
        var p = environ
        while let e = p.pointee {
            if strncmp(e, prefix, prefix.count) == 0 { out.append(e) }
            p += 1
        }
        return out
    }

    /// The `${NAME}` references in the string values of a parsed config (not its comments: the
    /// sample config mentions `${NAME}` in prose).
    public static func references(in value: JSONValue) -> [String] {
        switch value {
        case .string(let s): return references(in: s)
        case .array(let a): return a.flatMap { references(in: $0) }
        case .object(let o): return o.values.flatMap { references(in: $0) }
        default: return []
        }
    }

    /// The `${NAME}` references in one text (`$${` is a literal and names nothing).
    public static func references(in text: String) -> [String] {
        var out: [String] = []
        var rest = Substring(text)
        while let dollar = rest.firstIndex(of: "$") {
            let after = rest[rest.index(after: dollar)...]
            if after.hasPrefix("$") { rest = after.dropFirst(); continue }
            if after.hasPrefix("{"), let close = after.firstIndex(of: "}") {
                let name = String(after[after.index(after: after.startIndex)..<close])
                if !name.isEmpty, name.allSatisfy({ $0 == "_" || ($0.isASCII && ($0.isLetter || $0.isNumber)) }) { out.append(name) }
                rest = after[after.index(after: close)...]
            } else {
                rest = after
            }
        }
        return out
    }

    /// The withheld secrets (for the config and what it expands, never for a child's environment).
    public static var secrets: [String: String] { held.withLock { $0 } }

    /// The process environment as the config sees it: with the withheld secrets.
    public static var environment: [String: String] {
        ProcessEnvironment.current.merging(secrets) { current, _ in current }
    }
}
