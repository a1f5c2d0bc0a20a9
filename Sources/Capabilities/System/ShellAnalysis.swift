import Kit
import Support

/// What a command line runs, for allowlist matching. `["/bin/sh", "-lc", text]` (the gateway's
/// transport on Linux) is analysed as the inner `text`: a chain of simple commands joined by
/// `&&`, `||`, `;`, `|` or newlines, each split into words with the shell's quoting rules. Anything
/// whose meaning depends on expansion or redirection (`$`, backquotes, `<`, `>`, `&`, parentheses,
/// braces, globs) is not analysed: under `allowlist` it then needs an approval, as upstream.
///
/// Only a real system shell is a transport (`SystemShell`): `./sh -lc …` or a `sh` in a cloned
/// repository is a program like any other, matched against the allowlist itself.
struct ShellAnalysis: Equatable {
    /// The argv of each command in the chain (one entry for a plain argv).
    let segments: [[String]]
    /// The operators between the segments (`&&`, `||`, `|`, `;`): one fewer than segments.
    var separators: [String] = []
    /// False when the text could not be reduced to plain commands.
    let ok: Bool
    /// The run went through a shell wrapper (`sh -c`, `bash -lc`, …) of a system shell.
    let shellWrapper: Bool
    /// The wrapper's script (nil for a plain argv).
    var payload: String? = nil

    static let shells: Set<String> = ["sh", "bash", "dash", "zsh", "ksh", "ash"]

    /// `cwd` and `path` resolve argv[0], which must be a system shell to count as a transport.
    static func analyse(_ argv: [String], cwd: String?, path: String?) -> ShellAnalysis {
        if let inner = shellPayload(argv),
           let shell = ExecutableResolver.resolve(argv[0], path: path, cwd: cwd), SystemShell.isSystemShell(shell) {
            guard let (segs, seps) = splitWithSeparators(inner) else {
                return ShellAnalysis(segments: [], ok: false, shellWrapper: true, payload: inner)
            }
            return ShellAnalysis(segments: segs, separators: seps, ok: !segs.isEmpty, shellWrapper: true, payload: inner)
        }
        return ShellAnalysis(segments: [argv], ok: true, shellWrapper: false)
    }

    /// The script that runs exactly these programs: each command's name replaced by the path it
    /// was resolved to and checked against, words quoted, the same operators between them. Run
    /// with `sh -c` (not `-l`): a login profile could put another `git` first on PATH.
    func pinnedScript(resolved: [String]) -> String {
        var out = ""
        for (i, seg) in segments.enumerated() {
            if i > 0 { out += " \(separators[i - 1]) " }
            out += CommandText.format([resolved[i]] + seg.dropFirst())
        }
        return out
    }

    /// The script of `<shell> -c|-lc|-cl|-l -c <script>`, nil for anything else.
    static func shellPayload(_ argv: [String]) -> String? {
        guard argv.count >= 3, shells.contains(PathName.lastComponent(argv[0])) else { return nil }
        var i = 1
        var sawC = false
        while i < argv.count, argv[i].hasPrefix("-"), argv[i] != "--" {
            let flags = argv[i].dropFirst()
            guard !flags.isEmpty, flags.allSatisfy({ $0 == "c" || $0 == "l" }) else { return nil }
            if flags.contains("c") { sawC = true }
            i += 1
            if sawC { break }
        }
        guard sawC, i < argv.count else { return nil }
        return argv[i]
    }

    /// Splits a script into the argv of each simple command; nil when it is not that simple.
    static func split(_ script: String) -> [[String]]? { splitWithSeparators(script)?.segments }

    /// The simple commands and the operators between them.
    static func splitWithSeparators(_ script: String) -> (segments: [[String]], separators: [String])? {
        var segments: [[String]] = []
        var separators: [String] = []
        var words: [String] = []
        var word = ""
        var inWord = false
        var chars = Array(script)
        chars.append("\n")
        var i = 0
        func endWord() { if inWord { words.append(word); word = ""; inWord = false } }
        func endSegment(_ separator: String) -> Bool {
            endWord()
            guard !words.isEmpty else { return false }
            segments.append(words); words = []
            separators.append(separator)
            return true
        }
        while i < chars.count {
            let c = chars[i]
            switch c {
            case " ", "\t":
                endWord()
            case "\n", ";":
                if words.isEmpty && !inWord {
                    // Blank lines and a trailing ';' are fine; ";;" or a leading ';' are not.
                    if c == ";" { return nil }
                } else if !endSegment(";") { return nil }
            case "&":
                guard i + 1 < chars.count, chars[i + 1] == "&", endSegment("&&") else { return nil }
                i += 1
            case "|":
                let double = i + 1 < chars.count && chars[i + 1] == "|"
                if double { i += 1 }
                guard endSegment(double ? "||" : "|") else { return nil }
            case "'":
                inWord = true
                i += 1
                while i < chars.count, chars[i] != "'" { word.append(chars[i]); i += 1 }
                guard i < chars.count - 1 else { return nil }  // unterminated (the sentinel newline does not count)
            case "\"":
                inWord = true
                i += 1
                while i < chars.count - 1, chars[i] != "\"" {
                    let d = chars[i]
                    if d == "$" || d == "`" { return nil }
                    if d == "\\", i + 1 < chars.count - 1, "$`\"\\\n".contains(chars[i + 1]) { i += 1 }
                    word.append(chars[i]); i += 1
                }
                guard i < chars.count - 1 else { return nil }
            case "\\":
                guard i + 1 < chars.count - 1 else { return nil }
                i += 1
                if chars[i] != "\n" { word.append(chars[i]); inWord = true }
            case "#" where !inWord:
                while i < chars.count, chars[i] != "\n" { i += 1 }
                continue
            case "$", "`", "<", ">", "(", ")", "{", "}", "*", "?", "[", "~", "!":
                return nil
            default:
                word.append(c); inWord = true
            }
            i += 1
        }
        guard words.isEmpty, !inWord else { return nil }
        // The last segment was ended by the sentinel newline; a chain may not end in an operator.
        guard separators.last == ";" else { return nil }
        separators.removeLast()
        return (segments, separators)
    }
}
