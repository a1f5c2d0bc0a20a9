import Glibc

/// Whether a file may be trusted as code or policy of this process (a bundle, its manifest, a
/// plugin, a shell): like sshd's StrictModes, the file and every directory above it must belong
/// to root or to the user running the node, and must not be writable by group or others (a sticky
/// directory such as /tmp is fine: others cannot replace what is in it; so is a group-writable bit
/// for the owner's private group, which is what Debian 13's umask 0002 gives a user's checkout).
/// Anyone who could swap the file could run code as this node.
public enum FileTrust {
    /// nil when the path is trustworthy, else what is wrong with it and how to fix it.
    /// `rootOnly`: the node's own account is not enough (a system shell must be root's).
    public static func problem(_ path: String, rootOnly: Bool = false) -> String? {
        let resolved = PathName.resolvingSymlinks(path)
        var st = stat()
        guard stat(resolved, &st) == 0 else { return "cannot stat it: \(String(cString: strerror(errno)))" }
        guard st.st_mode & S_IFMT == S_IFREG else { return "it is not a regular file" }
        if let p = problem(resolved, st, isDirectory: false, rootOnly: rootOnly) { return p }
        var dir = PathName.directory(resolved)
        while !dir.isEmpty {
            guard stat(dir, &st) == 0 else { return "cannot stat \(dir): \(String(cString: strerror(errno)))" }
            if let p = problem(dir, st, isDirectory: true, rootOnly: rootOnly) { return p }
            if dir == "/" { break }
            dir = PathName.directory(dir)
        }
        return nil
    }

    private static func problem(_ path: String, _ st: stat, isDirectory: Bool, rootOnly: Bool) -> String? {
        let me = geteuid()
        if st.st_uid != 0 && (rootOnly || st.st_uid != me) {
            return "\(path) is owned by uid \(st.st_uid), not root\(rootOnly ? "" : " or the user running the node (uid \(me))"); run chown root \(path)"
        }
        if let who = writers(st, isDirectory: isDirectory) {
            return "\(path) is writable by \(who) (mode \((st.st_mode & 0o7777).octal())); run chmod go-w \(path)"
        }
        return nil
    }

    /// Who besides its owner can write to a file or directory with this status ("others", "its
    /// group (gid 100), which has other members"); nil when nobody can. A sticky directory such as
    /// /tmp lets nobody replace another's entries; a group-writable bit for the owner's private
    /// group (PrivateGroup) gives nobody else a way in.
    public static func writers(_ st: stat, isDirectory: Bool) -> String? {
        let mode = st.st_mode & 0o7777
        if isDirectory && mode & S_ISVTX != 0 { return nil }
        if mode & 0o002 != 0 { return "others" }
        if mode & 0o020 != 0 && !PrivateGroup.isPrivate(gid: st.st_gid, to: st.st_uid) {
            return "its group (gid \(st.st_gid)), which has members other than its owner"
        }
        return nil
    }
}
