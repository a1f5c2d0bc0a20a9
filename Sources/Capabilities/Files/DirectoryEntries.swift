import Glibc
import Support

/// One entry of an open directory, as lstat (fstatat without following) sees it.
struct DirectoryEntry: Sendable {
    let name: String
    let type: UInt8
    let info: stat?

    var isDirectory: Bool { info.map { ($0.st_mode & S_IFMT) == S_IFDIR } ?? (type == UInt8(DT_DIR)) }
    var isSymlink: Bool { info.map { ($0.st_mode & S_IFMT) == S_IFLNK } ?? (type == UInt8(DT_LNK)) }
}

enum DirectoryEntries {
    /// The entries of the directory open at `fd` (the descriptor stays open), without "." and "..".
    /// `withStat`: each also lstat'ed relative to the descriptor.
    static func list(_ fd: Int32, withStat: Bool) -> Result<[DirectoryEntry], Errno> {
        var out: [DirectoryEntry] = []
        let r = scan(fd) { name, type in
            var st = stat()
            let ok = withStat && fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0
            out.append(DirectoryEntry(name: name, type: type, info: ok ? st : nil))
            return true
        }
        switch r {
        case .success: return .success(out)
        case .failure(let e): return .failure(e)
        }
    }

    /// A name and its d_type: 17 bytes where a DirectoryEntry (with room for a stat) takes ~170.
    struct Name: Sendable { let name: String; let type: UInt8 }

    enum Failure: Error { case errno(Errno), tooMany(Int) }

    /// The names of the directory open at `fd`, refused past `limit` (nothing more is read).
    static func names(_ fd: Int32, limit: Int) -> Result<[Name], Failure> {
        var out: [Name] = []
        var over = false
        let r = scan(fd) { name, type in
            out.append(Name(name: name, type: type))
            if out.count > limit { over = true; return false }
            return true
        }
        if over { return .failure(.tooMany(limit)) }
        switch r {
        case .success: return .success(out)
        case .failure(let e): return .failure(.errno(e))
        }
    }

    /// readdir over a copy of `fd` (which stays open), without "." and ".."; `visit` returns false to stop.
    private static func scan(_ fd: Int32, _ visit: (String, UInt8) -> Bool) -> Result<Void, Errno> {
        let copy = dup(fd)
        guard copy >= 0 else { return .failure(Errno.current) }
        guard let dir = fdopendir(copy) else { let e = errno; close(copy); return .failure(Errno(e)) }
        defer { closedir(dir) }
        rewinddir(dir)
        errno = 0
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self) }
            if name == "." || name == ".." { continue }
            guard visit(name, entry.pointee.d_type) else { return .success(()) }
        }
        if errno != 0 && errno != ENOENT { return .failure(Errno.current) }
        return .success(())
    }

    /// An approximation of upstream's `localeCompare` order without ICU: case-insensitive, then
    /// lower case before upper case, then code points.
    static func localeOrder(_ a: String, _ b: String) -> Bool {
        let la = a.lowercased(), lb = b.lowercased()
        if la != lb { return la.unicodeScalars.lexicographicallyPrecedes(lb.unicodeScalars) }
        if a == b { return false }
        for (x, y) in zip(a.unicodeScalars, b.unicodeScalars) where x != y {
            if x.properties.isLowercase != y.properties.isLowercase { return x.properties.isLowercase }
            return x.value < y.value
        }
        return a.unicodeScalars.count < b.unicodeScalars.count
    }
}
