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
        let copy = dup(fd)
        guard copy >= 0 else { return .failure(Errno(code: errno)) }
        guard let dir = fdopendir(copy) else { let e = errno; close(copy); return .failure(Errno(code: e)) }
        defer { closedir(dir) }
        rewinddir(dir)
        var out: [DirectoryEntry] = []
        errno = 0
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self) }
            if name == "." || name == ".." { continue }
            var st = stat()
            let ok = withStat && fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0
            out.append(DirectoryEntry(name: name, type: entry.pointee.d_type, info: ok ? st : nil))
        }
        if errno != 0 && errno != ENOENT { return .failure(Errno(code: errno)) }
        return .success(out)
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
