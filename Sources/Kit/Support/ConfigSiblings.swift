/// The files beside a private file that give it away: an editor's backup or swap file
/// (`config.json5~`, `.config.json5.swp`, `config.json5.bak`, `#config.json5#`), made whenever
/// someone edits it — so they are judged by name when used, not listed once at start-up.
public enum ConfigSiblings {
    /// Whether `candidate` is `file` or one of its siblings (same directory, name built on its name).
    public static func covers(_ file: String, _ candidate: String) -> Bool {
        if candidate == file { return true }
        guard PathName.directory(candidate) == PathName.directory(file) else { return false }
        let base = PathName.lastComponent(file), name = PathName.lastComponent(candidate)
        return name.hasPrefix(base) || name.hasPrefix("." + base) || name.hasPrefix("#" + base)
    }

    /// `file` and its siblings that exist now.
    public static func existing(_ file: String) -> [String] {
        let dir = PathName.directory(file)
        let names = (try? FileSystem.contentsOfDirectory(dir)) ?? []
        // Regular files only: a directory named like it (`vnc-recordings/` beside `vnc`) is not a
        // backup, and bwrap cannot bind a file over a directory.
        return [file] + names.map { PathName.join(dir, $0) }.filter { $0 != file && covers(file, $0) && FileSystem.isRegularFile($0) }
    }
}
