import Glibc
import Support

/// Which file a command name runs: a name with a slash is taken relative to the working directory;
/// a bare name is looked up on PATH as execvp would. The path is the one that is executed (not
/// canonicalized: multi-call programs such as `unxz` → `xz` go by their name); matching compares
/// canonical paths as well (`AllowlistMatch`).
enum ExecutableResolver {
    static func resolve(_ name: String, path: String?, cwd: String?) -> String? {
        if name.contains("/") {
            let full = name.hasPrefix("/") ? name : PathName.join(cwd ?? FileSystem.currentDirectory, name)
            return Subprocess.isExecutableFile(full) ? full : nil
        }
        return Subprocess.findExecutable(name, path: path ?? ExecEnvironment.defaultPath)
    }
}

/// Glob patterns of the allowlist over a resolved binary path: `*` any run of characters except
/// `/`, `**` any run including `/`, `?` one character except `/`; a leading `~/` is the home directory.
enum PathGlob {
    static func matches(_ pattern: String, _ path: String, home: String) -> Bool {
        var p = pattern
        if p == "~" || p.hasPrefix("~/") { p = home + p.dropFirst() }
        return match(Array(p.unicodeScalars), 0, Array(path.unicodeScalars), 0)
    }

    private static func match(_ p: [Unicode.Scalar], _ pi: Int, _ s: [Unicode.Scalar], _ si: Int) -> Bool {
        if pi == p.count { return si == s.count }
        if p[pi] == "*" {
            let double = pi + 1 < p.count && p[pi + 1] == "*"
            var next = pi + (double ? 2 : 1)
            // "**/" also matches no directory at all ("/a/**/b" matches "/a/b").
            if double, next < p.count, p[next] == "/", match(p, next + 1, s, si) { return true }
            if double { while next < p.count, p[next] == "*" { next += 1 } }
            var k = si
            while true {
                if match(p, next, s, k) { return true }
                guard k < s.count, double || s[k] != "/" else { return false }
                k += 1
            }
        }
        guard si < s.count else { return false }
        if p[pi] == "?" { return s[si] != "/" && match(p, pi + 1, s, si + 1) }
        return p[pi] == s[si] && match(p, pi + 1, s, si + 1)
    }
}
