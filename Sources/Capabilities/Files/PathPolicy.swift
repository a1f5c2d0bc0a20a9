import Glibc
import Support

/// The node's own path policy, beyond upstream (which trusts the gateway's): deny by default; a
/// path is read or written only when its canonical form (every link resolved) matches a glob of
/// `capabilities.files.read` or `.write`, and never when it is the node's state directory, its
/// config file, or the daemon's own /proc entry (its environment, its open descriptors), whatever
/// the globs say. So a gateway with a loose or missing file policy cannot reach the device key.
struct PathPolicy: Sendable {
    enum Kind: Sendable {
        case read, write
        var key: String { self == .read ? "capabilities.files.read" : "capabilities.files.write" }
    }

    let settings: FilesSettings
    let privateDirectories: [String]
    let privateFiles: [String]

    init(settings: FilesSettings, privateDirectories: [String], privateFiles: [String]) {
        self.settings = settings
        // /proc/<pid> of the daemon: /proc/self/environ and /proc/self/fd/N resolve there.
        self.privateDirectories = privateDirectories + ["/proc/\(getpid())"]
        self.privateFiles = privateFiles
    }

    /// The private paths in canonical form, resolved at each use (the state directory may be made
    /// after the bundle is), and as written too.
    private var canonicalPrivate: (dirs: [String], files: [String]) {
        let resolve = { (p: String) -> [String] in
            let n = CanonicalPath.normalize(p.hasPrefix("/") ? p : PathName.join(FileSystem.currentDirectory, p))
            let r = (try? CanonicalPath.real(n).get()) ?? CanonicalPath.fromExistingAncestor(n)
            return r == n ? [n] : [n, r]
        }
        return (privateDirectories.flatMap(resolve), privateFiles.flatMap(resolve))
    }

    /// Whether the canonical path is private (in the state directory, the config file, ours in /proc).
    func isPrivate(_ canonical: String) -> Bool {
        let p = canonicalPrivate
        return p.dirs.contains { PathName.isWithin($0, canonical) } || p.files.contains { ConfigSiblings.covers($0, canonical) }
            || Self.isOwnThread(canonical)
    }

    /// /proc/<tid> of one of the daemon's threads: not listed in /proc, but there all the same,
    /// with the process's environ, fds and memory (a /proc/** glob once read the daemon's environ
    /// through one).
    static func isOwnThread(_ canonical: String) -> Bool {
        let parts = canonical.split(separator: "/", maxSplits: 2)
        guard parts.count >= 2, parts[0] == "proc", let id = Int32(parts[1]) else { return false }
        return id == getpid() || FileSystem.exists("/proc/\(getpid())/task/\(id)")
    }

    /// Whether a private directory or file lies inside the tree at `canonical` (dir.fetch).
    func treeHoldsPrivate(_ canonical: String) -> Bool {
        let p = canonicalPrivate
        return (p.dirs + p.files).contains { PathName.isWithin(canonical, $0) }
    }

    /// Why the policy refuses `canonical`, or nil when it allows it. The message names the path as
    /// the caller sent it (`shown`), never where its links lead: a refusal must not tell the
    /// gateway what a link points at.
    func denial(_ kind: Kind, _ canonical: String, shown: String) -> String? {
        if isPrivate(canonical) {
            return "\(shown) is the node's own state, config or process data, which the files capability never \(kind == .read ? "reads" : "writes") (no setting changes this)"
        }
        let globs = kind == .read ? settings.read : settings.write
        if globs.contains(where: { $0.matches(canonical) }) { return nil }
        if globs.isEmpty {
            return "no \(kind.key) globs are configured, so the node \(kind == .read ? "reads" : "writes") no path (deny by default); add a glob that covers \(shown)\(canonical == shown ? "" : " (where it leads)") to \(kind.key) in the node's config"
        }
        return "\(shown) matches no glob of \(kind.key)\(canonical == shown ? "" : " where it leads"); add one that covers it to \(kind.key) in the node's config"
    }

    static let parentSegmentDenial = "path contains '..' segments; the node refuses them before any glob match (send the absolute path without them)"

    /// Files (device, inode) inside the private directories, for files with more than one name: a
    /// hard link to the device key elsewhere is the device key. Walked only when such a file is met.
    func privateInodes(limit: Int = 100_000) -> Set<FileID> {
        var out = Set<FileID>()
        var pending = canonicalPrivate.dirs.filter { !$0.hasPrefix("/proc/") } + canonicalPrivate.files
        var seen = 0
        while let path = pending.popLast(), seen < limit {
            seen += 1
            var st = stat()
            guard lstat(path, &st) == 0 else { continue }
            if (st.st_mode & S_IFMT) == S_IFDIR {
                for name in (try? FileSystem.contentsOfDirectory(path)) ?? [] { pending.append(PathName.join(path, name)) }
            } else if (st.st_mode & S_IFMT) == S_IFREG {
                out.insert(FileID(st))
            }
        }
        return out
    }
}

/// A file's identity (device and inode), whatever name it is reached by.
struct FileID: Hashable, Sendable {
    let device: UInt64
    let inode: UInt64
    init(_ st: stat) { device = UInt64(st.st_dev); inode = UInt64(st.st_ino) }
}
