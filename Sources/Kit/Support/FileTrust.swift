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
        switch walk(path, rootOnly: rootOnly) {
        case .failure(let why): return why.description
        case .success(let (resolved, st)):
            guard st.st_mode & S_IFMT == S_IFREG else { return "it is not a regular file" }
            return problem(resolved, st, isDirectory: false, rootOnly: rootOnly)
        }
    }

    /// The same for a directory (a plugin's, the skills directory): nil when it and the way to it
    /// are trustworthy.
    public static func directoryProblem(_ path: String, rootOnly: Bool = false) -> String? {
        switch walk(path, rootOnly: rootOnly) {
        case .failure(let why): return why.description
        case .success(let (resolved, st)):
            guard st.st_mode & S_IFMT == S_IFDIR else { return "it is not a directory" }
            return problem(resolved, st, isDirectory: true, rootOnly: rootOnly)
        }
    }

    /// The path's real location, reached one component at a time: every directory on the way must
    /// pass the rule, and so must every symbolic link followed — its owner can repoint it, so a link
    /// another account planted in /tmp (sticky, so its directory passes) is refused, not resolved
    /// and forgotten. Returns the resolved path and the status of its last component.
    public static func walk(_ path: String, rootOnly: Bool = false) -> Result<(String, stat), TrustFailure> {
        let absolute = path.hasPrefix("/") ? path : PathName.join(FileSystem.currentDirectory, path)
        var todo = Array(absolute.split(separator: "/").map(String.init).reversed())
        var at = "/"
        var st = stat()
        guard stat("/", &st) == 0 else { return .failure(TrustFailure("cannot stat /")) }
        if let p = problem("/", st, isDirectory: true, rootOnly: rootOnly) { return .failure(TrustFailure(p)) }
        var links = 0
        while let name = todo.popLast() {
            if name == "." || name.isEmpty { continue }
            if name == ".." { at = PathName.directory(at); continue }
            let next = PathName.join(at, name)
            guard lstat(next, &st) == 0 else { return .failure(TrustFailure("cannot stat \(next): \(String(cString: strerror(errno)))")) }
            if st.st_mode & S_IFMT == S_IFLNK {
                links += 1
                guard links <= 40 else { return .failure(TrustFailure("\(next): too many symbolic links")) }
                if st.st_uid != 0 && (rootOnly || st.st_uid != geteuid()) {
                    return .failure(TrustFailure("\(next) is a symbolic link owned by uid \(st.st_uid), who can point it elsewhere at any time; replace it with the real path"))
                }
                guard let target = try? FileSystem.destinationOfSymbolicLink(next) else { return .failure(TrustFailure("cannot read the link \(next)")) }
                if target.hasPrefix("/") { at = "/" }
                todo += target.split(separator: "/").map(String.init).reversed()
                continue
            }
            at = next
            // Directories on the way are checked here; the last component by the caller (file or directory).
            if !todo.isEmpty, let p = problem(at, st, isDirectory: true, rootOnly: rootOnly) { return .failure(TrustFailure(p)) }
        }
        guard stat(at, &st) == 0 else { return .failure(TrustFailure("cannot stat \(at): \(String(cString: strerror(errno)))")) }
        return .success((at, st))
    }

    public struct TrustFailure: Error, CustomStringConvertible {
        public let description: String
        init(_ d: String) { description = d }
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
