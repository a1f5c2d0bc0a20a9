import Glibc

/// File-system path arithmetic on plain strings (NSString's path methods live in Foundation, which
/// the daemon does not link).
public enum PathName {
    /// "/a/b/c" → "/a/b"; "/a" → "/"; "c" → "".
    public static func directory(_ path: String) -> String {
        var p = Substring(path)
        while p.count > 1 && p.hasSuffix("/") { p = p.dropLast() }
        guard let slash = p.lastIndex(of: "/") else { return "" }
        let dir = p[..<slash]
        return dir.isEmpty ? "/" : String(dir)
    }

    /// "/a/b/c" → "c".
    public static func lastComponent(_ path: String) -> String {
        var p = Substring(path)
        while p.count > 1 && p.hasSuffix("/") { p = p.dropLast() }
        guard let slash = p.lastIndex(of: "/"), p != "/" else { return String(p) }
        return String(p[p.index(after: slash)...])
    }

    /// "a" + "b" → "a/b", with one slash between.
    public static func join(_ base: String, _ name: String) -> String {
        if base.isEmpty { return name }
        return base.hasSuffix("/") ? base + name : base + "/" + name
    }

    /// The permission bits (mode & 07777) of a file, or nil when it cannot be stat'ed.
    public static func permissions(_ path: String) -> Int? {
        var st = stat()
        guard stat(path, &st) == 0 else { return nil }
        return Int(st.st_mode & 0o7777)
    }

    /// Where temporary files go, as glibc programs (and Chromium) decide it: $TMPDIR, else /tmp;
    /// without a trailing slash.
    public static func tempDirectory(_ env: [String: String]) -> String {
        guard var t = env["TMPDIR"], t.hasPrefix("/") else { return "/tmp" }
        while t.count > 1 && t.hasSuffix("/") { t.removeLast() }
        return t
    }

    /// The user's home directory: $HOME, else the password database's entry for this user.
    public static func home(_ env: [String: String]) -> String {
        if let h = env["HOME"], !h.isEmpty { return h }
        if let pw = getpwuid(geteuid()), let dir = pw.pointee.pw_dir { return String(cString: dir) }
        return "/"
    }

    /// Whether `path` is `ancestor` or below it (plain string paths, both canonical).
    public static func isWithin(_ ancestor: String, _ path: String) -> Bool {
        if ancestor == "/" { return path.hasPrefix("/") }
        return path == ancestor || path.hasPrefix(ancestor.hasSuffix("/") ? ancestor : ancestor + "/")
    }

    /// The path with symbolic links and "." / ".." resolved (realpath(3)); the input when it does not exist.
    public static func resolvingSymlinks(_ path: String) -> String {
        guard let r = realpath(path, nil) else { return path }
        defer { free(r) }
        return String(cString: r)
    }
}
