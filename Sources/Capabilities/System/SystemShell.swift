import Support

/// Whether a program is one of this system's shells, and so may be a transport (`sh -lc …`) whose
/// script is analysed instead of the program itself: its canonical path is that of a shell listed
/// in /etc/shells, and it and every directory above it belong to root and are not writable by
/// group or others. A name alone proves nothing: `/tmp/x/sh` or `./sh` is whatever its author wrote.
enum SystemShell {
    static func isSystemShell(_ resolvedPath: String) -> Bool {
        let real = PathName.resolvingSymlinks(resolvedPath)
        guard listed.contains(real) else { return false }
        return FileTrust.problem(real, rootOnly: true) == nil
    }

    /// The canonical paths of /etc/shells' entries (absolute lines only; comments skipped).
    static var listed: Set<String> {
        let text = (FileSystem.readText("/etc/shells")) ?? ""
        var out = Set<String>()
        for line in text.split(separator: "\n") {
            let path = line.trimmed()
            guard path.hasPrefix("/") else { continue }
            out.insert(PathName.resolvingSymlinks(path))
        }
        return out
    }
}
