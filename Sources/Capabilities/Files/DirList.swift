import Glibc
import Kit
import Support

struct DirListParams: CommandParams {
    var path: JSONValue?
    var pageToken: JSONValue?
    var maxEntries: JSONValue?
    var followSymlinks: JSONValue?
}

struct DirListEntry: Encodable, Sendable {
    let name: String
    let path: String
    let size: Int
    let mimeType: String
    let isDir: Bool
    let mtime: Double
}

struct DirListResult: Encodable, Sendable {
    var ok = true
    let path: String
    let entries: [DirListEntry]
    let nextPageToken: String?
    let truncated: Bool
}

/// One page of a directory's entries (names, sizes, MIME types by extension, mtimes), in upstream's order.
struct DirList {
    static let defaultMaxEntries = 200
    static let hardMaxEntries = 5000

    let policy: PathPolicy

    func run(_ p: DirListParams) async -> TransferReply<DirListResult> {
        let job = self
        let r = await BlockingExecutor.run("files-dir-list") { (_: CancelFlag) -> Result<DirListResult, TransferFailure> in job.list(p) }
        switch r {
        case .success(let r): return .ok(r)
        case .failure(let f): return .failed(f)
        }
    }

    private func list(_ p: DirListParams) -> Result<DirListResult, TransferFailure> {
        var wording = RequestedPath.Wording()
        wording.notFound = "path not found"
        let canonical: String
        switch RequestedPath.text(p.path, wording).flatMap({ RequestedPath.resolveForRead($0, policy: policy, followRequested: p.followSymlinks.isTrue, wording) }) {
        case .success(let c): canonical = c
        case .failure(let f): return .failure(f)
        }
        let maxEntries = p.maxEntries.clampedCount(default: Self.defaultMaxEntries, cap: Self.hardMaxEntries)
        let offset = p.pageToken?.stringValue.map(Self.parseInt) ?? 0

        var st = stat()
        guard stat(canonical, &st) == 0 else {
            let e = SystemError(errno, "stat", canonical)
            return .failure(TransferFailure(Self.classify(e.errno), "stat failed: \(e.jsString)", canonicalPath: canonical))
        }
        guard (st.st_mode & S_IFMT) == S_IFDIR else { return .failure(TransferFailure(.isFile, "path is not a directory", canonicalPath: canonical)) }

        let fd: Int32
        switch CanonicalPath.openVerified(canonical, flags: O_RDONLY | O_DIRECTORY, syscall: "scandir") {
        case .open(let d): fd = d
        case .failed(let e): return .failure(TransferFailure(Self.classify(e.errno), "list failed: \(e.jsString)", canonicalPath: canonical))
        case .moved: return .failure(TransferFailure(.readError, "list failed: the path changed while it was opened", canonicalPath: canonical))
        }
        defer { close(fd) }
        // Sorted names (once per directory state: SortedNames), then a stat for the page's own.
        let all: [DirectoryEntries.Name]
        switch SortedNames.of(fd) {
        case .success(let e): all = e
        case .failure(.tooMany(let n)):
            return .failure(TransferFailure(.readError, "list failed: the directory has more than \(n) entries; list a smaller one", canonicalPath: canonical))
        case .failure(.errno(let failure)):
            let e = SystemError(failure.code, "scandir", canonical)
            return .failure(TransferFailure(Self.classify(failure.code), "list failed: \(e.jsString)", canonicalPath: canonical))
        }
        let page = all.dropFirst(min(offset, all.count)).prefix(maxEntries).map { e -> DirectoryEntry in
            var st = stat()
            return DirectoryEntry(name: e.name, type: e.type, info: fstatat(fd, e.name, &st, AT_SYMLINK_NOFOLLOW) == 0 ? st : nil)
        }
        let truncated = offset + maxEntries < all.count
        let entries = page.map { e -> DirListEntry in
            let dir = e.isDirectory
            let mtime = e.info.map { Double($0.st_mtim.tv_sec) * 1000 + Double($0.st_mtim.tv_nsec) / 1_000_000 } ?? 0
            return DirListEntry(name: e.name, path: PathName.join(canonical, e.name), size: dir ? 0 : Int(e.info?.st_size ?? 0),
                                mimeType: dir ? "inode/directory" : MimeTypes.byExtension(e.name), isDir: dir, mtime: mtime)
        }
        return .success(DirListResult(path: canonical, entries: entries, nextPageToken: truncated ? String(offset + maxEntries) : nil,
                                      truncated: truncated))
    }

    static func classify(_ errno: Int32) -> TransferCode {
        switch errno {
        case ENOENT: return .notFound
        case EACCES, EPERM: return .permissionDenied
        default: return .readError
        }
    }

    /// `Math.max(0, parseInt(token, 10) || 0)`: leading white space, a sign, the digits that follow.
    static func parseInt(_ token: String) -> Int {
        var s = Substring(token.trimmingSpaces)
        var negative = false
        if let c = s.first, c == "+" || c == "-" { negative = c == "-"; s = s.dropFirst() }
        let digits = s.prefix { $0.isASCII && $0.isNumber }
        guard !digits.isEmpty, !negative else { return 0 }
        return Int(digits.prefix(15)) ?? 0
    }
}
