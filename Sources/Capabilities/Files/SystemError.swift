import Glibc

/// A failed system call as upstream's Node.js host words it (libuv's names and texts), since its
/// messages travel to the gateway unchanged: "ENOENT: no such file or directory, scandir '/x'".
struct SystemError: Error, Sendable, CustomStringConvertible {
    let errno: Int32
    let syscall: String
    let path: String

    init(_ errno: Int32, _ syscall: String, _ path: String) { self.errno = errno; self.syscall = syscall; self.path = path }

    var description: String { "\(Self.name(errno)): \(Self.text(errno)), \(syscall) '\(path)'" }
    /// What JavaScript's `String(err)` makes of it (upstream puts that in some messages).
    var jsString: String { "Error: \(description)" }

    private static let known: [Int32: (String, String)] = [
        ENOENT: ("ENOENT", "no such file or directory"), EACCES: ("EACCES", "permission denied"),
        EPERM: ("EPERM", "operation not permitted"), ENOTDIR: ("ENOTDIR", "not a directory"),
        EISDIR: ("EISDIR", "illegal operation on a directory"), ELOOP: ("ELOOP", "too many symbolic links encountered"),
        ENAMETOOLONG: ("ENAMETOOLONG", "name too long"), EEXIST: ("EEXIST", "file already exists"),
        ENOSPC: ("ENOSPC", "no space left on device"), EROFS: ("EROFS", "read-only file system"),
        EBUSY: ("EBUSY", "resource busy or locked"), EXDEV: ("EXDEV", "cross-device link not permitted"),
        EIO: ("EIO", "i/o error"), EMFILE: ("EMFILE", "too many open files"), EINVAL: ("EINVAL", "invalid argument"),
    ]

    static func name(_ e: Int32) -> String { known[e]?.0 ?? "E\(e)" }
    static func text(_ e: Int32) -> String { known[e]?.1 ?? String(cString: strerror(e)).lowercased() }

    var isPermission: Bool { errno == EACCES || errno == EPERM }
}
