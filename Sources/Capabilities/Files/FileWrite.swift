import Glibc
import Kit
import Support

struct FileWriteParams: CommandParams {
    var path: JSONValue?
    var contentBase64: JSONValue?
    var overwrite: JSONValue?
    var createParents: JSONValue?
    var expectedSha256: JSONValue?
    var followSymlinks: JSONValue?
    var preflightOnly: JSONValue?
}

struct FileWriteResult: Encodable, Sendable {
    var ok = true
    let path: String
    let size: Int
    let sha256: String
    let overwritten: Bool
}

/// Writes one file atomically: the bytes go to `<path>.<16 hex>.tmp` beside it (created
/// exclusively), then are renamed over the path — or linked to it when overwrite is false, so a
/// file that appears meanwhile is not replaced. Every step is relative to the parent directory's
/// descriptor, checked to be the canonical parent the policy allowed.
struct FileWrite {
    let policy: PathPolicy

    func run(_ p: FileWriteParams) async -> TransferReply<FileWriteResult> {
        let job = self
        let r = await BlockingExecutor.run("files-write") { (_: CancelFlag) -> Result<FileWriteResult, TransferFailure> in job.write(p) }
        switch r {
        case .success(let r): return .ok(r)
        case .failure(let f): return .failed(f)
        }
    }

    private func write(_ p: FileWriteParams) -> Result<FileWriteResult, TransferFailure> {
        let raw: String
        switch RequestedPath.text(p.path, .write) {
        case .success(let r): raw = r
        case .failure(let f): return .failure(f)
        }
        guard case .string(let content)? = p.contentBase64 else { return .failure(TransferFailure(.invalidBase64, "contentBase64 is required")) }
        let overwrite = p.overwrite.isTrue, createParents = p.createParents.isTrue, preflight = p.preflightOnly.isTrue
        let expected = p.expectedSha256?.stringValue.map { $0.lowercased() }
        let followRequested = p.followSymlinks.isTrue
        let follow = followRequested && policy.settings.followSymlinks

        guard let bytes = Self.decodeTolerant(content) else { return .failure(TransferFailure(.invalidBase64, "contentBase64 is not valid base64")) }
        let limit = policy.settings.maxBytes
        if bytes.count > FilesSettings.hardMaxBytes {
            return .failure(TransferFailure(.fileTooLarge, "decoded content is \(bytes.count) bytes; maximum is \(FilesSettings.hardMaxBytes) bytes (16 MB)"))
        }
        if bytes.count > limit {
            return .failure(TransferFailure(.fileTooLarge, "decoded content is \(bytes.count) bytes; maximum is \(limit) bytes (capabilities.files.maxBytes)"))
        }

        let target = CanonicalPath.normalize(raw)
        let parent = PathName.directory(target), name = PathName.lastComponent(target)
        // The policy looks at where the file would be: the parent's canonical form and the name.
        let canonicalParent = (try? CanonicalPath.real(parent).get()) ?? CanonicalPath.fromExistingAncestor(parent)
        let canonicalTarget = PathName.join(canonicalParent, name)
        if let why = policy.denial(.write, canonicalTarget, shown: target) { return .failure(TransferFailure(.policyDenied, why)) }
        if !follow, let ancestor = CanonicalPath.existingAncestor(parent) {
            let real = (try? CanonicalPath.real(ancestor).get()) ?? ancestor
            if real != ancestor {
                let rest = parent.dropFirst(ancestor == "/" ? 0 : ancestor.count)
                let canonical = PathName.join(real + rest, name)
                return .failure(TransferFailure(.symlinkRedirect, RequestedPath.symlinkMessage(requested: followRequested, kind: .write), canonicalPath: canonical))
            }
        }

        let parentExists = FileSystem.isDirectory(canonicalParent)
        if !parentExists {
            guard createParents else { return .failure(TransferFailure(.parentNotFound, "parent directory does not exist: \(parent)")) }
            if preflight {
                let sha = SHA256.hexDigest(bytes)
                if let expected, !expected.isEmpty, expected != sha {
                    return .failure(TransferFailure(.integrityFailure, "sha256 mismatch: expected \(expected), got \(sha)", canonicalPath: target))
                }
                return .success(FileWriteResult(path: CanonicalPath.fromExistingAncestor(target), size: bytes.count, sha256: sha, overwritten: false))
            }
            if let failure = Self.makeParents(canonicalParent) {
                return .failure(TransferFailure(.writeError, "failed to create parent directories: \(failure)"))
            }
        }

        let dirFD: Int32
        switch CanonicalPath.openVerified(canonicalParent, flags: O_RDONLY | O_DIRECTORY) {
        case .open(let d): dirFD = d
        case .failed(let e):
            if e.isPermission { return .failure(TransferFailure(.permissionDenied, "permission denied: \(target)")) }
            return .failure(TransferFailure(.writeError, "unexpected stat error: \(e.jsString)"))
        case .moved: return .failure(TransferFailure(.symlinkRedirect, RequestedPath.symlinkMessage(requested: followRequested, kind: .write)))
        }
        defer { close(dirFD) }

        var overwritten = false
        var st = stat()
        if fstatat(dirFD, name, &st, AT_SYMLINK_NOFOLLOW) == 0 {
            if (st.st_mode & S_IFMT) == S_IFLNK {
                return .failure(TransferFailure(.symlinkTargetDenied, "path is a symlink; refusing to write through it: \(target)"))
            }
            if (st.st_mode & S_IFMT) == S_IFDIR { return .failure(TransferFailure(.isDirectory, "path resolves to a directory: \(target)")) }
            if !overwrite { return .failure(TransferFailure(.existsNoOverwrite, "file already exists and overwrite is false: \(target)")) }
            overwritten = true
        } else if errno != ENOENT {
            let e = SystemError(errno, "lstat", target)
            if e.isPermission { return .failure(TransferFailure(.permissionDenied, "permission denied: \(target)")) }
            return .failure(TransferFailure(.writeError, "unexpected stat error: \(e.jsString)"))
        }

        // Hashed before anything touches the disk: a wrong expectedSha256 leaves the file as it was.
        let sha = SHA256.hexDigest(bytes)
        if let expected, !expected.isEmpty, expected != sha {
            return .failure(TransferFailure(.integrityFailure, "sha256 mismatch: expected \(expected), got \(sha)", canonicalPath: target))
        }
        if preflight {
            return .success(FileWriteResult(path: CanonicalPath.fromExistingAncestor(target), size: bytes.count, sha256: sha, overwritten: overwritten))
        }

        let tmp = "\(name).\(SecureRandom.bytes(8).map { $0.hex() }.joined()).tmp"
        if let e = Self.writeTemporary(dirFD, tmp, bytes) {
            _ = unlinkat(dirFD, tmp, 0)
            if e.isPermission { return .failure(TransferFailure(.permissionDenied, "permission denied writing to: \(parent)")) }
            return .failure(TransferFailure(.writeError, "failed to write file: \(e.jsString)"))
        }
        if let e = Self.install(dirFD, tmp, name, replace: overwrite, target: target) {
            _ = unlinkat(dirFD, tmp, 0)
            if e.errno == EEXIST { return .failure(TransferFailure(.existsNoOverwrite, "file already exists and overwrite is false: \(target)")) }
            if e.isPermission { return .failure(TransferFailure(.permissionDenied, "permission denied renaming to: \(target)")) }
            return .failure(TransferFailure(.writeError, "failed to rename tmp to target: \(e.jsString)"))
        }
        let final = (try? CanonicalPath.real(target).get()) ?? target
        return .success(FileWriteResult(path: final, size: bytes.count, sha256: sha, overwritten: overwritten))
    }

    /// Upstream's rule: the text must be what its bytes encode to, padding and the URL-safe
    /// alphabet aside ("QR==" names no bytes exactly and is refused; "QQ", "QQ==" are both "A").
    static func decodeTolerant(_ text: String) -> [UInt8]? {
        // On the UTF-8 bytes, in one pass: 16 MiB of content is 22 MB of text.
        var text = text
        return text.withUTF8 { all in
            var n = all.count
            while n > 0, all[n - 1] == UInt8(ascii: "=") { n -= 1 }
            return Base64.decode(utf8: UnsafeBufferPointer(rebasing: all[..<n]), canonical: true)
        }
    }

    /// The missing directories down to `canonicalParent`, each made with mkdirat in the one above
    /// (opened without following links), so a link put in their way is not walked through.
    static func makeParents(_ canonicalParent: String) -> String? {
        guard let ancestor = CanonicalPath.existingAncestor(canonicalParent) else { return "no existing ancestor of \(canonicalParent)" }
        var fd: Int32
        switch CanonicalPath.openVerified(ancestor, flags: O_RDONLY | O_DIRECTORY) {
        case .open(let d): fd = d
        case .failed(let e): return e.jsString
        case .moved: return "\(ancestor) changed while it was opened"
        }
        defer { close(fd) }
        var made = ancestor
        for part in canonicalParent.dropFirst(ancestor == "/" ? 0 : ancestor.count).split(separator: "/") {
            let name = String(part)
            made = PathName.join(made, name)
            if mkdirat(fd, name, 0o777) != 0 && errno != EEXIST { return SystemError(errno, "mkdir", made).jsString }
            let next = openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            guard next >= 0 else { return SystemError(errno, "mkdir", made).jsString }
            close(fd)
            fd = next
        }
        return nil
    }

    private static func writeTemporary(_ dirFD: Int32, _ name: String, _ bytes: [UInt8]) -> SystemError? {
        let fd = openat(dirFD, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o666)
        guard fd >= 0 else { return SystemError(errno, "open", name) }
        defer { close(fd) }
        do throws(Errno) { try SystemIO.live.writeAll(fd, bytes) } catch { return SystemError(error.code, "write", name) }
        // On the disk before the rename makes it the file: a crash leaves the old file or the new one.
        if fsync(fd) != 0 { return SystemError(errno, "fsync", name) }
        return nil
    }

    /// rename over the target; without `replace`, link then unlink (EEXIST if a file appeared).
    private static func install(_ dirFD: Int32, _ tmp: String, _ name: String, replace: Bool, target: String) -> SystemError? {
        if !replace {
            if linkat(dirFD, tmp, dirFD, name, 0) == 0 { _ = unlinkat(dirFD, tmp, 0); return nil }
            // File systems without hard links (FAT): a plain rename after the existence check.
            guard errno == EPERM || errno == EOPNOTSUPP || errno == EMLINK else { return SystemError(errno, "link", target) }
        }
        if renameat(dirFD, tmp, dirFD, name) != 0 { return SystemError(errno, "rename", target) }
        return nil
    }
}
