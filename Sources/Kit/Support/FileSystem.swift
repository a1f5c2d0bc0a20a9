import Glibc

/// The file operations the node needs, as thin wrappers over the system calls (FileManager's
/// part of Foundation, without linking it). Errors carry the C library's words and the path.
public enum FileSystem {
    public struct Failure: Error, Sendable, CustomStringConvertible {
        public let path: String
        public let errno: Int32
        public init(_ path: String, errno: Int32) { self.path = path; self.errno = errno }
        public var reason: String { String(cString: strerror(errno)) }
        public var description: String { "\(path): \(reason)" }
    }

    /// Whether anything exists at `path` (following symbolic links).
    public static func exists(_ path: String) -> Bool { access(path, F_OK) == 0 }

    public static func isDirectory(_ path: String) -> Bool {
        var st = stat()
        return stat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFDIR
    }

    /// A Unix socket (a compositor's, a local server's), following symbolic links.
    public static func isSocket(_ path: String) -> Bool {
        var st = stat()
        return stat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFSOCK
    }

    public static func isRegularFile(_ path: String) -> Bool {
        var st = stat()
        return stat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFREG
    }

    /// A regular file this process may execute (what execvp would run).
    public static func isExecutableFile(_ path: String) -> Bool { isRegularFile(path) && access(path, X_OK) == 0 }

    /// The names in a directory, without "." and "..", in no particular order.
    public static func contentsOfDirectory(_ path: String) throws(Failure) -> [String] {
        guard let dir = opendir(path) else { throw Failure(path, errno: errno) }
        defer { closedir(dir) }
        return names(in: dir)
    }

    /// The names an open directory stream (opendir/fdopendir) lists, without "." and "..".
    public static func names(in dir: OpaquePointer) -> [String] {
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// Where a symbolic link points (its text, not resolved further).
    public static func destinationOfSymbolicLink(_ path: String) throws(Failure) -> String {
        var buf = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let n = readlink(path, &buf, buf.count - 1)
        guard n >= 0 else { throw Failure(path, errno: errno) }
        return String(decoding: buf[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    public static var currentDirectory: String {
        guard let p = getcwd(nil, 0) else { return "/" }
        defer { free(p) }
        return String(cString: p)
    }

    /// Creates `path` (and missing parents when `intermediates`) with `mode` for each one made.
    public static func createDirectory(_ path: String, intermediates: Bool = true, mode: mode_t = 0o755) throws(Failure) {
        if intermediates {
            var prefix = path.hasPrefix("/") ? "" : "."
            for part in path.split(separator: "/") {
                prefix += "/" + part
                if mkdir(prefix, mode) != 0 && errno != EEXIST { throw Failure(prefix, errno: errno) }
            }
            guard isDirectory(path) else { throw Failure(path, errno: ENOTDIR) }
        } else if mkdir(path, mode) != 0 {
            throw Failure(path, errno: errno)
        }
    }

    /// Removes a file, a symbolic link (not what it points to) or a directory tree. Missing is fine.
    public static func remove(_ path: String) throws(Failure) {
        var st = stat()
        guard lstat(path, &st) == 0 else {
            if errno == ENOENT { return }
            throw Failure(path, errno: errno)
        }
        if (st.st_mode & S_IFMT) == S_IFDIR {
            for name in try contentsOfDirectory(path) { try remove(path + "/" + name) }
            if rmdir(path) != 0 && errno != ENOENT { throw Failure(path, errno: errno) }
        } else if unlink(path) != 0 && errno != ENOENT {
            throw Failure(path, errno: errno)
        }
    }

    /// The whole file.
    public static func contents(_ path: String) throws(Failure) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw Failure(path, errno: errno) }
        defer { close(fd) }
        var out: [UInt8] = []
        var buf = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = Glibc.read(fd, &buf, buf.count)
            if n < 0 { if errno == EINTR { continue }; throw Failure(path, errno: errno) }
            if n == 0 { return out }
            out.append(contentsOf: buf[0..<n])
        }
    }

    /// The whole file (nil when it cannot be read).
    public static func readBytes(_ path: String) -> [UInt8]? { try? contents(path) }

    /// The file as UTF-8 text (invalid sequences replaced; nil when it cannot be read).
    public static func readText(_ path: String) -> String? { readBytes(path).map { String(decoding: $0, as: UTF8.self) } }

    /// Writes `bytes` to `path` with `mode`: through a temporary file renamed over it when
    /// `atomically` (a reader never sees half a file), else in place.
    public static func write(_ bytes: some Collection<UInt8>, to path: String, mode: mode_t = 0o644, atomically: Bool = true) throws(Failure) {
        let target = atomically ? path + ".tmp-\(getpid())" : path
        let file: FileDescriptor
        do throws(Errno) { file = try FileDescriptor.open(target, O_WRONLY | O_CREAT | O_TRUNC, mode: mode) }
        catch { throw Failure(target, errno: error.code) }
        do throws(Errno) {
            try file.writeAll(Array(bytes))
            // fchmod: the mode asked for, whatever the umask took away at open.
            _ = fchmod(file.rawValue, mode)
            try file.close()
        } catch {
            if atomically { unlink(target) }
            throw Failure(path, errno: error.code)
        }
        if atomically && rename(target, path) != 0 {
            let e = errno
            unlink(target)
            throw Failure(path, errno: e)
        }
    }

    /// Gives `file` to the owner of `directory` when this runs as root and another account owns the
    /// folder (root writing into a service account's state directory: the service must keep using it).
    public static func matchOwner(_ file: String, of directory: String) {
        var st = stat()
        guard geteuid() == 0, stat(directory, &st) == 0, st.st_uid != 0 else { return }
        _ = chown(file, st.st_uid, st.st_gid)
    }

    public static func setPermissions(_ path: String, _ mode: mode_t) throws(Failure) {
        if chmod(path, mode) != 0 { throw Failure(path, errno: errno) }
    }

    /// Size in bytes (nil when there is nothing at `path`).
    public static func size(_ path: String) -> Int64? {
        var st = stat()
        return stat(path, &st) == 0 ? Int64(st.st_size) : nil
    }

    /// Last modification, in seconds since 1970 (nil when there is nothing at `path`).
    public static func modificationTime(_ path: String) -> Double? {
        var st = stat()
        guard stat(path, &st) == 0 else { return nil }
        return Double(st.st_mtim.tv_sec) + Double(st.st_mtim.tv_nsec) / 1e9
    }

    /// Up to `limit` bytes from `fd`, read until end of file or the limit (EINTR retried). Callers
    /// pass one byte more than they accept, so a file that grew is noticed, never cut.
    public static func read(_ fd: Int32, upTo limit: Int) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: limit)
        var used = 0
        while used < bytes.count {
            let n = bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + used, $0.count - used) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { break }
            used += n
        }
        bytes.removeSubrange(used...)
        return bytes
    }
}
