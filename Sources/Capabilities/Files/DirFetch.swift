import Glibc
import Kit
import Support

struct DirFetchParams: CommandParams {
    var path: JSONValue?
    var maxBytes: JSONValue?
    var includeDotfiles: JSONValue?
    var followSymlinks: JSONValue?
    var preflightOnly: JSONValue?
}

struct DirFetchResult: Encodable, Sendable {
    var ok = true
    let path: String
    let tarBase64: String
    let tarBytes: Int
    let sha256: String
    let fileCount: Int
    let entries: [String]?
    var preflightOnly: Bool? = nil
}

/// A directory tree as a gzip tarball made by tar(1), run in the directory through its descriptor
/// (`-C /proc/self/fd/3`), so the tree archived is the one the policy allowed. tar stores links as
/// links; a tree that holds the node's state (by path or by a hard link) is refused.
struct DirFetch {
    static let defaultMaxBytes = 8 * 1024 * 1024
    static let preflightMaxEntries = 5000
    static let tarTimeout: Duration = .seconds(60)

    let policy: PathPolicy

    func run(_ p: DirFetchParams) async -> TransferReply<DirFetchResult> {
        switch await fetch(p) {
        case .success(let r): return .ok(r)
        case .failure(let f): return .failed(f)
        }
    }

    private func fetch(_ p: DirFetchParams) async -> Result<DirFetchResult, TransferFailure> {
        var wording = RequestedPath.Wording()
        wording.notFound = "directory not found"
        wording.permissionCode = .readError
        let canonical: String
        switch RequestedPath.text(p.path, wording).flatMap({ RequestedPath.resolveForRead($0, policy: policy, followRequested: p.followSymlinks.isTrue, wording) }) {
        case .success(let c): canonical = c
        case .failure(let f): return .failure(f)
        }
        let maxBytes = min(p.maxBytes.clampedCount(default: Self.defaultMaxBytes, cap: FilesSettings.hardMaxBytes), policy.settings.maxBytes)

        var st = stat()
        guard stat(canonical, &st) == 0 else {
            let e = SystemError(errno, "stat", canonical)
            return .failure(TransferFailure(e.errno == ENOENT ? .notFound : .readError, "stat failed: \(e.jsString)", canonicalPath: canonical))
        }
        guard (st.st_mode & S_IFMT) == S_IFDIR else { return .failure(TransferFailure(.isFile, "path is not a directory", canonicalPath: canonical)) }
        if policy.treeHoldsPrivate(canonical) {
            return .failure(TransferFailure(.policyDenied, "\(canonical) holds the node's own state directory or config file, which the files capability never reads (no setting changes this); fetch a directory that does not contain them"))
        }
        let fd: Int32
        switch CanonicalPath.openVerified(canonical, flags: O_RDONLY | O_DIRECTORY) {
        case .open(let d): fd = d
        case .failed(let e): return .failure(TransferFailure(e.errno == ENOENT ? .notFound : .readError, "open failed: \(e.jsString)", canonicalPath: canonical))
        case .moved: return .failure(TransferFailure(.readError, "open failed: the path changed while it was opened", canonicalPath: canonical))
        }
        defer { close(fd) }

        let preflight = p.preflightOnly.isTrue
        // upstream's du pre-check allows four times maxBytes of disk usage (gzip compresses).
        let maxKilobytes = (maxBytes * 4 + 1023) / 1024
        let walkPolicy = policy
        let walked = await BlockingExecutor.run("files-tree-walk") { (flag: CancelFlag) -> Result<TreeWalk, TreeWalk.Stop> in
            TreeWalk.walk(fd, maxEntries: preflight ? Self.preflightMaxEntries : nil, maxKilobytes: preflight ? nil : maxKilobytes,
                          privateInodes: { walkPolicy.privateInodes() }, cancel: flag)
        }
        let tree: TreeWalk
        switch walked {
        case .success(let t): tree = t
        case .failure(.tooManyEntries):
            return .failure(TransferFailure(.treeTooLarge, "directory tree exceeds \(Self.preflightMaxEntries) entries during preflight", canonicalPath: canonical))
        case .failure(.tooLarge):
            return .failure(TransferFailure(.treeTooLarge, "directory tree exceeds estimated size limit (\(maxBytes) bytes raw)", canonicalPath: canonical))
        case .failure(.privateFile(let rel)):
            return .failure(TransferFailure(.policyDenied, "\(PathName.join(canonical, rel)) is another name (a hard link) of a file in the node's own state, which the files capability never reads (no setting changes this)"))
        case .failure(.failed(let errno)):
            let e = SystemError(errno, "scandir", canonical)
            return .failure(TransferFailure(errno == ENOENT ? .notFound : .readError, "\(preflight ? "preflight readdir" : "size check") failed: \(e.jsString)", canonicalPath: canonical))
        case .failure(.cancelled):
            return .failure(TransferFailure(.readError, "cancelled", canonicalPath: canonical))
        }
        if preflight {
            return .success(DirFetchResult(path: canonical, tarBase64: "", tarBytes: 0, sha256: "", fileCount: tree.entries.count,
                                           entries: tree.entries, preflightOnly: true))
        }

        guard let tar = ToolProcess.find("tar") else {
            return .failure(TransferFailure(.readError, "tar command failed", canonicalPath: canonical))
        }
        let archive = await ToolProcess(executable: tar, arguments: ["-czf", "-", "-C", "/proc/self/fd/3", "."],
                                        extraFDs: [3: fd], outputCap: maxBytes, timeout: Self.tarTimeout).run()
        if archive.overCap {
            return .failure(TransferFailure(.treeTooLarge, "tarball exceeded \(maxBytes) byte limit mid-stream", canonicalPath: canonical))
        }
        if archive.timedOut {
            return .failure(TransferFailure(.readError, "tar command exceeded 60s wall-clock timeout (slow filesystem or symlink loop?)", canonicalPath: canonical))
        }
        guard archive.succeeded else { return .failure(TransferFailure(.readError, "tar command failed", canonicalPath: canonical)) }
        let bytes = archive.stdout
        let entries = await Self.listing(bytes, tar: tar)
        return .success(DirFetchResult(path: canonical, tarBase64: Base64.encode(bytes), tarBytes: bytes.count,
                                       sha256: SHA256.hexDigest(bytes), fileCount: entries.count, entries: entries))
    }

    /// The tarball's names as `tar -tzf` lists them, without "./" and trailing slashes ([] when it fails).
    static func listing(_ tarball: [UInt8], tar: String) async -> [String] {
        let run = await ToolProcess(executable: tar, arguments: ["-tzf", "-"], stdin: tarball, outputCap: 32 << 20, timeout: .seconds(10)).run()
        guard run.succeeded else { return [] }
        return String(decoding: run.stdout, as: UTF8.self).split(separator: "\n").map { line -> String in
            var s = line.replacingAll("\\", "/")
            if s.hasPrefix("./") { s.removeFirst(2) }
            if s.hasSuffix("/") { s.removeLast() }
            return s
        }.filter { !$0.isEmpty }
    }
}

extension StringProtocol {
    func replacingAll(_ a: Character, _ b: Character) -> String { String(map { $0 == a ? b : $0 }) }
}
