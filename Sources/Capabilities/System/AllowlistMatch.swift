import Support

/// Whether an allowlist entry covers one simple command (docs/PROTOCOL.md §6.4, "Allowlist").
enum AllowlistMatch {
    /// A pattern with a slash is a glob over the resolved path; a bare name matches a command
    /// invoked by that bare name and found on PATH. `argPattern`, when present, is a regular
    /// expression searched in the arguments (argv without argv[0]) joined by single spaces.
    /// A path pattern matches the path that runs or, both canonical, its real path.
    /// Git given configuration on its command line (`InlineEval.gitConfig`) needs an entry with
    /// an argument pattern.
    /// `realPath` is `resolvedPath` with its symbolic links resolved.
    static func matches(_ entry: AllowlistEntry, argv: [String], resolvedPath: String, realPath: String, home: String) -> Bool {
        if entry.pattern.hasPrefix("=") { return false }  // argv-bound allow-always entries: see commandPattern
        let pathMatches: Bool
        if entry.pattern.contains("/") {
            pathMatches = PathGlob.matches(entry.pattern, resolvedPath, home: home)
                || PathGlob.matches(entry.canonicalPattern ?? AllowlistPatterns.canonical(entry.pattern, home: home), realPath, home: home)
        } else {
            pathMatches = !argv[0].contains("/") && PathGlob.matches(entry.pattern, argv[0], home: home)
        }
        guard pathMatches else { return false }
        guard let arg = entry.argPattern else { return !InlineEval.gitConfig(argv) }
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
            (interpreters.contains(PathName.lastComponent(seg[0])) && seg.dropFirst().contains { flags.contains($0) }) || gitConfig(seg)
        } || !analysis.ok
    }

    /// `git -c key=value` and `--config-env`: any configuration given on the command line is code
    /// (`alias.x=!cmd`, `core.sshCommand`, `core.fsmonitor`, `protocol.ext.allow`, …), so git with
    /// it counts as inline evaluation: never remembered, and not covered by an allowlist entry
    /// without an argument pattern.
    static func gitConfig(_ argv: [String]) -> Bool {
        guard PathName.lastComponent(argv[0]) == "git" else { return false }
        var args = argv.dropFirst()[...]
        while let arg = args.popFirst() {
            if arg.hasPrefix("-c") || arg == "--config-env" || arg.hasPrefix("--config-env=") { return true }
            // Global options before the subcommand; the subcommand's own arguments are its business.
            if ["-C", "--git-dir", "--work-tree", "--namespace", "--super-prefix"].contains(arg) { _ = args.popFirst(); continue }
            if !arg.hasPrefix("-") { return false }
        }
        return false
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
