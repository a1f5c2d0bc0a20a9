import Glibc
import Kit
import Support

/// What terminal.upload may keep staged at once, upstream's budgets: 64 upload directories and
/// 256 MiB in all (retained 24 h). Beyond upstream, a staging file system (the runtime tmpfs, which
/// logind sizes at 10 % of RAM — a few hundred MiB on a Pi) keeps a tenth of itself free. Checked
/// and staged under an exclusive lock on the staging root, so concurrent uploads (threads, or a CLI
/// beside the daemon) cannot both take the last place.
enum UploadBudget {
    static let maxDirectories = 64
    static let maxBytes = 256 << 20
    static let exhausted: NodeError.Code = "TERMINAL_UPLOAD_STAGING_EXHAUSTED"

    /// Runs `stage` under the root's lock when `bytes` more fit; refuses with upstream's message when not.
    static func withRoom<T>(in root: String, for bytes: Int, _ stage: () throws(NodeError) -> T) throws(NodeError) -> T {
        let fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw NodeError.invalidRequest("cannot stage the upload: \(SystemError(errno, "open", root))") }
        defer { close(fd) }
        while flock(fd, LOCK_EX) != 0 && errno == EINTR {}
        let (directories, used) = retained(root)
        guard directories < maxDirectories, used + bytes <= maxBytes else {
            throw NodeError(exhausted, verbatim: "terminal upload staging limit reached (256 MiB or 64 files). Move or remove staged files, then retry, or wait for the 24-hour cleanup.")
        }
        var fs = statvfs()
        if statvfs(root, &fs) == 0, fs.f_blocks > 0 {
            let size = Int(fs.f_blocks) * Int(fs.f_frsize), free = Int(fs.f_bavail) * Int(fs.f_frsize)
            guard free - bytes >= size / 10 else {
                throw NodeError(exhausted, verbatim: "terminal upload staging limit reached: \(root) would have less than a tenth of its \(size >> 20) MiB free. Move or remove staged files, then retry, or wait for the 24-hour cleanup.")
            }
        }
        return try stage()
    }

    /// The staged upload directories of this user and the bytes their files hold (the larger of
    /// size and blocks, so sparse or preallocated files count as what they may grow to use).
    static func retained(_ root: String) -> (directories: Int, bytes: Int) {
        var dirs = 0, bytes = 0
        for name in (try? FileSystem.contentsOfDirectory(root)) ?? [] where name.hasPrefix(TerminalUpload.directoryPrefix) {
            let dir = PathName.join(root, name)
            var st = stat()
            guard lstat(dir, &st) == 0, st.st_mode & S_IFMT == S_IFDIR, st.st_uid == geteuid() else { continue }
            dirs += 1
            for file in (try? FileSystem.contentsOfDirectory(dir)) ?? [] {
                var f = stat()
                guard lstat(PathName.join(dir, file), &f) == 0 else { continue }
                bytes += max(Int(f.st_size), Int(f.st_blocks) * 512)
            }
        }
        return (dirs, bytes)
    }
}
