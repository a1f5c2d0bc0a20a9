import Glibc
import Kit
import Support

/// Like ssh's StrictModes, for the node's own state: the state directory and `state.db*` must
/// belong to the account running the node and be writable by it alone, and the directories above
/// must be root's or its own and not writable by others (sticky /tmp is fine). An account that
/// made the directory or the database holds the device key and reads every token written later,
/// so the node refuses such state instead of using it (docs/SECURITY.md).
enum StateTrust {
    static func problem(directory dir: String) -> String? {
        let real = PathName.resolvingSymlinks(dir)
        var st = stat()
        guard stat(real, &st) == 0 else { return nil }  // created by prepareDirectory
        if let why = ownership(real, st) { return why }
        var parent = PathName.directory(real)
        while !parent.isEmpty {
            guard stat(parent, &st) == 0 else { break }
            if st.st_uid != 0 && st.st_uid != geteuid() {
                return refusal(dir, "the directory above it, \(parent), is owned by uid \(st.st_uid), who could replace it")
            }
            // A user's own directories are group-writable for their private group under Debian
            // 13's umask 0002: that lets nobody else in (FileTrust.writers).
            if let who = FileTrust.writers(st, isDirectory: true) {
                return refusal(dir, "the directory above it, \(parent), is writable by \(who) (mode \((st.st_mode & 0o7777).octal())), who could replace it")
            }
            if parent == "/" { break }
            parent = PathName.directory(parent)
        }
        // The way there, links included: a link another account owns (in /tmp, say) could be
        // repointed at its own directory, socket and all, after this check.
        if case .failure(let why) = FileTrust.walk(dir) { return refusal(dir, why.description) }
        for name in ["state.db", "state.db-wal", "state.db-shm", "state.db-journal"] {
            if let why = problem(database: PathName.join(real, name)) { return why }
        }
        return nil
    }

    /// For one of the database's files (nil when it does not exist).
    static func problem(database path: String) -> String? {
        var st = stat()
        guard lstat(path, &st) == 0 else { return nil }
        guard st.st_mode & S_IFMT == S_IFREG else { return refusal(path, "it is not a regular file") }
        return ownership(path, st)
    }

    private static func ownership(_ path: String, _ st: stat) -> String? {
        let me = geteuid()
        let mode = st.st_mode & 0o7777
        if st.st_uid != me {
            return refusal(path, "it is owned by uid \(st.st_uid), not the account running the node (uid \(me))")
        }
        if mode & 0o022 != 0 {
            return refusal(path, "it is writable by group or others (mode \(mode.octal()))")
        }
        return nil
    }

    private static func refusal(_ path: String, _ why: String) -> String {
        "refusing to use \(path): \(why). Whoever controls the node's state holds its device key and reads its tokens. " +
            "Remove it, or make it this account's alone (chown -R \(geteuid()) \(path); chmod -R go-w \(path)), or set node.stateDir"
    }
}
