import Support

/// What a command line runs, for allowlist matching. `["/bin/sh", "-lc", text]` (the gateway's
/// transport on Linux) is analysed as the inner `text`: a chain of simple commands joined by
/// `&&`, `||`, `;`, `|` or newlines, each split into words with the shell's quoting rules. Anything
/// whose meaning depends on expansion or redirection (`$`, backquotes, `<`, `>`, `&`, parentheses,
/// braces, globs) is not analysed: under `allowlist` it then needs an approval, as upstream.
struct ShellAnalysis: Equatable {
    /// The argv of each command in the chain (one entry for a plain argv).
    let segments: [[String]]
    /// False when the text could not be reduced to plain commands.
    let ok: Bool
    /// The run went through a shell wrapper (`sh -c`, `bash -lc`, …).
    let shellWrapper: Bool

    static let shells: Set<String> = ["sh", "bash", "dash", "zsh", "ksh", "ash"]

    static func analyse(_ argv: [String]) -> ShellAnalysis {
        if let inner = shellPayload(argv) {
            guard let segs = split(inner) else { return ShellAnalysis(segments: [], ok: false, shellWrapper: true) }
            return ShellAnalysis(segments: segs, ok: !segs.isEmpty, shellWrapper: true)
        }
        return ShellAnalysis(segments: [argv], ok: true, shellWrapper: false)
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
    static func split(_ script: String) -> [[String]]? {
        var segments: [[String]] = []
        var words: [String] = []
        var word = ""
        var inWord = false
        var chars = Array(script)
        chars.append("\n")
        var i = 0
        func endWord() { if inWord { words.append(word); word = ""; inWord = false } }
        func endSegment() -> Bool {
            endWord()
            guard !words.isEmpty else { return false }
            segments.append(words); words = []
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
                } else if !endSegment() { return nil }
            case "&":
                guard i + 1 < chars.count, chars[i + 1] == "&", endSegment() else { return nil }
                i += 1
            case "|":
                if i + 1 < chars.count, chars[i + 1] == "|" { i += 1 }
                guard endSegment() else { return nil }
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
        return segments
    }
}
