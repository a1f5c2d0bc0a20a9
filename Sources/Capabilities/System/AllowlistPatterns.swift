import Kit
import Support

/// The allowlist patterns a gateway may write, and their canonical form (docs/SECURITY.md, "The
/// allowlist ceiling"). An entry is stored canonical — `~` expanded, `.`/`..` folded, symbolic
/// links of its literal directories resolved — so that `/bin/echo` matches on a merged-/usr
/// system instead of silently never matching. The config's `allowlistCeiling` (path globs) bounds
/// what an entry may cover; without it, no entry may cover every program.
enum AllowlistPatterns {
    static let wildcards: Set<Character> = ["*", "?"]

    /// The canonical pattern (bare names and `=command:` entries unchanged).
    static func canonical(_ pattern: String, home: String) -> String {
        guard pattern.contains("/"), !pattern.hasPrefix("=") else { return pattern }
        var p = pattern
        if p == "~" || p.hasPrefix("~/") { p = home + p.dropFirst() }
        guard p.hasPrefix("/") else { return pattern }  // relative: never matches a resolved path; left as written
        var parts: [String] = []
        for c in p.split(separator: "/", omittingEmptySubsequences: true) {
            if c == "." { continue }
            if c == ".." { if !parts.isEmpty { parts.removeLast() }; continue }
            parts.append(String(c))
        }
        // The longest literal prefix is a real place: resolve its symbolic links.
        let literal = parts.prefix { !$0.contains(where: { wildcards.contains($0) }) }
        let rest = parts.dropFirst(literal.count)
        let prefix = PathName.resolvingSymlinks("/" + literal.joined(separator: "/"))
        return rest.isEmpty ? prefix : PathName.join(prefix, rest.joined(separator: "/"))
    }

    /// Whether a (canonical) pattern covers every program: a wildcard in its first path component
    /// (`**`, `/**`, `/*/**`), or a bare name made only of wildcards (`*`).
    static func coversEverything(_ canonical: String) -> Bool {
        if canonical.hasPrefix("=") { return false }
        guard canonical.contains("/") else { return !canonical.isEmpty && canonical.allSatisfy { wildcards.contains($0) } }
        guard canonical.hasPrefix("/") else { return canonical.split(separator: "/").first?.contains(where: { wildcards.contains($0) }) ?? true }
        guard let first = canonical.split(separator: "/").first else { return true }  // "/" itself
        return first.contains { wildcards.contains($0) }
    }

    /// Why a gateway may not store this entry (nil: it may). A bare name is judged by where it
    /// resolves on the daemon's PATH now. An entry without an argument pattern that covers a shell,
    /// an interpreter or a program runner (CodeRunners) allows every program: refused like `**`,
    /// whatever the ceiling (a ceiling of `/usr/bin/*` admits `/usr/bin/python3`).
    static func refusal(_ pattern: String, argPattern: String? = nil, canonical: String, ceiling: [String]?, home: String, path: String?) -> String? {
        if canonical.hasPrefix("=") { return nil }  // an allow-always entry: one exact command
        if let why = boundsRefusal(pattern, canonical: canonical, ceiling: ceiling, home: home, path: path) { return why }
        if argPattern == nil, let runner = CodeRunners.covered(by: canonical, home: home, path: path) {
            return "allowlist entry \"\(pattern)\" covers \(runner), which runs whatever code or program it is given: that would allow every program; name the programs, or give the entry an argument pattern (argPattern)"
        }
        return nil
    }

    /// The ceiling's verdict (or, without one, whether the pattern covers every program).
    private static func boundsRefusal(_ pattern: String, canonical: String, ceiling: [String]?, home: String, path: String?) -> String? {
        guard let ceiling else {
            return coversEverything(canonical)
                ? "allowlist entry \"\(pattern)\" would allow every program; name the programs (capabilities.system.allowlistCeiling bounds what the gateway may add)"
                : nil
        }
        let subject: String
        if canonical.contains("/") {
            subject = canonical
        } else {
            guard !canonical.contains(where: { wildcards.contains($0) }),
                  let found = ExecutableResolver.resolve(canonical, path: path, cwd: nil) else {
                return "allowlist entry \"\(pattern)\" is not inside capabilities.system.allowlistCeiling (a bare name with wildcards, or one not found on PATH)"
            }
            subject = PathName.resolvingSymlinks(found)
        }
        let bounds = ceiling.map { Self.canonical($0, home: home) }
        guard bounds.contains(where: { within(subject, $0) }) else {
            return "allowlist entry \"\(pattern)\" is not inside capabilities.system.allowlistCeiling (\(ceiling.joined(separator: ", ")))"
        }
        return nil
    }

    /// Whether every path glob `inner` matches is matched by glob `outer` (conservative: may say
    /// no for some that are). `*`/`?` of the outer pattern stand for runs of the inner one without
    /// `/` or `**`; `**` for any run.
    static func within(_ inner: String, _ outer: String) -> Bool {
        let a = tokens(inner), b = tokens(outer)
        var memo: [Int: Bool] = [:]
        func go(_ i: Int, _ j: Int) -> Bool {
            let key = i * (b.count + 1) + j
            if let m = memo[key] { return m }
            var r = false
            if j == b.count { r = i == a.count }
            else {
                switch b[j] {
                case .any:
                    r = go(i, j + 1) || (i < a.count && go(i + 1, j))
                case .star:
                    r = go(i, j + 1) || (i < a.count && a[i] != .any && a[i] != .literal("/") && go(i + 1, j))
                case .one:
                    r = i < a.count && (a[i] == .one || (a[i] != .any && a[i] != .star && a[i] != .literal("/"))) && go(i + 1, j + 1)
                case .literal(let c):
                    r = i < a.count && a[i] == .literal(c) && go(i + 1, j + 1)
                }
            }
            memo[key] = r
            return r
        }
        return go(0, 0)
    }

    private enum Token: Equatable { case literal(Character), one, star, any }

    private static func tokens(_ s: String) -> [Token] {
        var out: [Token] = []
        var chars = Array(s)[...]
        while let c = chars.popFirst() {
            switch c {
            case "*":
                if chars.first == "*" { while chars.first == "*" { chars.removeFirst() }; out.append(.any) } else { out.append(.star) }
            case "?": out.append(.one)
            default: out.append(.literal(c))
            }
        }
        return out
    }
}
