import Glibc
import Kit
import Support

struct FsListDirParams: CommandParams {
    var path: JSONValue?
}

/// fs.listDir's closed result (upstream's FsListDirResult).
struct FsListDirResult: Encodable, Sendable, Equatable {
    struct Entry: Encodable, Sendable, Equatable {
        let name: String
        let path: String
        var hidden: Bool? = nil
    }
    let path: String
    let parent: String?
    let home: String
    let entries: [Entry]
}

/// `fs.listDir`: the subdirectories of one directory, for the Control UI's directory picker. Names
/// only, no file contents; still inside `capabilities.files.read`, since the names of what is in a
/// directory are its contents too (and the node's own state is never listed).
struct DirectoryPicker {
    let policy: PathPolicy

    func run(_ p: FsListDirParams) async throws(NodeError) -> FsListDirResult {
        let job = self
        return try await BlockingExecutor.run("files-list-dir") { (_: CancelFlag) throws(NodeError) -> FsListDirResult in try job.list(p) }
    }

    private func list(_ p: FsListDirParams) throws(NodeError) -> FsListDirResult {
        if let v = p.path, v.stringValue == nil { throw NodeError.invalidRequest("path must be a string") }
        let home = policy.settings.home
        let text = p.path?.stringValue?.trimmingSpaces ?? ""
        let requested = text.isEmpty ? home : text
        guard requested.hasPrefix("/") else { throw NodeError.invalidRequest("fs.listDir path must be absolute") }
        if CanonicalPath.hasParentSegment(requested) { throw NodeError(.policyDenied, PathPolicy.parentSegmentDenial) }
        let resolved = CanonicalPath.normalize(requested)
        let canonical = (try? CanonicalPath.real(resolved).get()) ?? CanonicalPath.fromExistingAncestor(resolved)
        if let why = policy.denial(.read, canonical, shown: requested) { throw NodeError(.policyDenied, why) }

        let fd: Int32
        switch CanonicalPath.openVerified(canonical, flags: O_RDONLY | O_DIRECTORY, syscall: "scandir") {
        case .open(let d): fd = d
        case .failed(let e): throw NodeError.invalidRequest(SystemError(e.errno, "scandir", resolved).description)
        case .moved: throw NodeError.invalidRequest("\(resolved) changed while it was opened")
        }
        defer { close(fd) }
        let list: [DirectoryEntry]
        switch DirectoryEntries.list(fd, withStat: false) {
        case .success(let l): list = l
        case .failure(let failure): throw NodeError.invalidRequest(SystemError(failure.code, "scandir", resolved).description)
        }
        var entries: [FsListDirResult.Entry] = []
        for e in list {
            var isDir = e.type == UInt8(DT_DIR)
            var st = stat()
            if e.type == UInt8(DT_LNK) {
                // Links are followed, so linked checkouts stay pickable; a dangling or unreadable one drops out.
                isDir = fstatat(fd, e.name, &st, 0) == 0 && (st.st_mode & S_IFMT) == S_IFDIR
            } else if e.type == UInt8(DT_UNKNOWN) {
                isDir = fstatat(fd, e.name, &st, 0) == 0 && (st.st_mode & S_IFMT) == S_IFDIR
            }
            guard isDir else { continue }
            entries.append(.init(name: e.name, path: PathName.join(resolved, e.name), hidden: e.name.hasPrefix(".") ? true : nil))
        }
        // Visible first, then byte order of the names.
        entries.sort { a, b in
            if (a.hidden != nil) != (b.hidden != nil) { return a.hidden == nil }
            return Array(a.name.utf8).lexicographicallyPrecedes(Array(b.name.utf8))
        }
        let parent = PathName.directory(resolved)
        return FsListDirResult(path: resolved, parent: parent == resolved ? nil : parent, home: home, entries: entries)
    }
}
