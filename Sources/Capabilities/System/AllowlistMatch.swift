import Support

/// Whether an allowlist entry covers one simple command (docs/PROTOCOL.md §6.4, "Allowlist").
enum AllowlistMatch {
    /// A pattern with a slash is a glob over the resolved path; a bare name matches a command
    /// invoked by that bare name and found on PATH. `argPattern`, when present, is a regular
    /// expression searched in the arguments (argv without argv[0]) joined by single spaces.
    static func matches(_ entry: AllowlistEntry, argv: [String], resolvedPath: String, home: String) -> Bool {
        if entry.pattern.hasPrefix("=") { return false }  // argv-bound allow-always entries: see commandPattern
        let pathMatches: Bool
        if entry.pattern.contains("/") {
            pathMatches = PathGlob.matches(entry.pattern, resolvedPath, home: home)
        } else {
            pathMatches = !argv[0].contains("/") && PathGlob.matches(entry.pattern, argv[0], home: home)
        }
        guard pathMatches else { return false }
        guard let arg = entry.argPattern else { return true }
        guard let regex = try? Regex(arg) else { return false }
        return argv.dropFirst().joined(separator: " ").firstMatch(of: regex) != nil
    }

    /// The entry an allow-always decision stores: bound to the exact command text.
    static func commandPattern(_ commandText: String) -> String { "=command:" + SHA256.hex(commandText).prefix(16) }
}

/// Commands that run code given inline (`python3 -c …`, `node -e …`): never remembered by
/// allow-always, since the same binary would then run anything.
enum InlineEval {
    static let interpreters: Set<String> = ["python", "python3", "node", "nodejs", "perl", "ruby", "php", "lua", "deno", "bun",
                                            "sh", "bash", "dash", "zsh", "ksh", "osascript", "pwsh"]
    static let flags: Set<String> = ["-c", "-e", "-E", "--eval", "-p", "--print", "-lc", "-r"]

    static func present(_ analysis: ShellAnalysis) -> Bool {
        analysis.segments.contains { seg in
            interpreters.contains(PathName.lastComponent(seg[0])) && seg.dropFirst().contains { flags.contains($0) }
        } || !analysis.ok
    }
}

/// The text of an argv for logs and events: words with spaces or quotes single-quoted.
enum CommandText {
    static func format(_ argv: [String]) -> String {
        argv.map { w in
            let plain = !w.isEmpty && w.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || "0123456789-_./=:,+@%".unicodeScalars.contains($0)) }
            return plain ? w : "'" + w.replacing("'", with: "'\\''") + "'"
        }.joined(separator: " ")
    }
}
