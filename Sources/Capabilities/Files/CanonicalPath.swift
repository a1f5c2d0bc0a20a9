import Glibc
import Support

/// Path arithmetic and resolution for the file commands: the lexical form of a requested path, its
/// canonical form (every symbolic link resolved, realpath(3)), and descriptors opened so that what
/// was checked is what is read or written.
enum CanonicalPath {
    /// An absolute path without empty and "." segments or a trailing slash ("//a/./b/" → "/a/b");
    /// ".." is taken back lexically (callers refuse paths that have it before this).
    static func normalize(_ path: String) -> String {
        var parts: [Substring] = []
        for part in path.split(separator: "/", omittingEmptySubsequences: true) {
            if part == "." { continue }
            if part == ".." { _ = parts.popLast(); continue }
            parts.append(part)
        }
        return "/" + parts.joined(separator: "/")
    }

    /// Whether the path as sent has a ".." segment (backslashes count as separators, as upstream's
    /// gateway checks). Checked on the raw text: normalizing first would hide "/allowed/../etc".
    static func hasParentSegment(_ path: String) -> Bool {
        path.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "/" || $0 == "\\" }).contains("..")
    }

    /// realpath(3).
    static func real(_ path: String) -> Result<String, SystemError> {
        guard let r = realpath(path, nil) else { return .failure(SystemError(errno, "realpath", path)) }
        defer { free(r) }
        return .success(String(cString: r))
    }

    /// Whether anything (a dangling link too) is at `path`.
    static func lexists(_ path: String) -> Bool {
        var st = stat()
        return lstat(path, &st) == 0
    }

    /// The deepest of `path` and its ancestors that exists (lstat), or nil.
    static func existingAncestor(_ path: String) -> String? {
        var current = path
        while true {
            if lexists(current) { return current }
            let parent = PathName.directory(current)
            if parent == current || parent.isEmpty { return nil }
            current = parent
        }
    }

    /// The canonical form of a path that may not exist yet: its deepest existing ancestor resolved,
    /// the rest appended as it is.
    static func fromExistingAncestor(_ path: String) -> String {
        guard let ancestor = existingAncestor(path) else { return path }
        let resolved = (try? real(ancestor).get()) ?? ancestor
        let rest = path.dropFirst(ancestor == "/" ? 0 : ancestor.count)
        if rest.isEmpty { return resolved }
        return resolved == "/" ? String(rest) : resolved + rest
    }

    enum Opened {
        case open(Int32)
        case failed(SystemError)
        /// Something at the path changed between resolving and opening it (a link swapped in).
        case moved
    }

    /// Opens the canonical path (never following a link in its last part) and makes sure the
    /// descriptor is that path: the kernel's name for it (/proc/self/fd) must be the canonical path,
    /// so a directory swapped for a symbolic link after the check is noticed, not read through.
    static func openVerified(_ canonical: String, flags: Int32, syscall: String = "open") -> Opened {
        let fd = open(canonical, flags | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { return .failed(SystemError(errno, syscall, canonical)) }
        if let name = try? FileSystem.destinationOfSymbolicLink("/proc/self/fd/\(fd)") {
            if name == canonical { return .open(fd) }
            close(fd)
            return .moved
        }
        // No /proc: the same file as the path names now, at least.
        var a = stat(), b = stat()
        if fstat(fd, &a) == 0, stat(canonical, &b) == 0, a.st_dev == b.st_dev, a.st_ino == b.st_ino { return .open(fd) }
        close(fd)
        return .moved
    }
}
