import Glibc
import Kit
import Support

/// `file.fetch` params, read as loosely as upstream reads them.
struct FileFetchParams: CommandParams {
    var path: JSONValue?
    var maxBytes: JSONValue?
    var followSymlinks: JSONValue?
    var preflightOnly: JSONValue?
}

struct FileFetchResult: Encodable, Sendable {
    var ok = true
    let path: String
    let size: Int
    let mimeType: String
    let base64: String
    let sha256: String
    var preflightOnly: Bool? = nil
}

/// One file: its bytes (base64), size, sha256 and MIME type. Read through a descriptor that is
/// checked to be the canonical path, so a link swapped in after the policy check is not followed.
struct FileFetch {
    static let defaultMaxBytes = 8 * 1024 * 1024

    let policy: PathPolicy

    func run(_ p: FileFetchParams) async -> TransferReply<FileFetchResult> {
        switch await fetch(p) {
        case .success(let r): return .ok(r)
        case .failure(let f): return .failed(f)
        }
    }

    private func fetch(_ p: FileFetchParams) async -> Result<FileFetchResult, TransferFailure> {
        let wording = RequestedPath.Wording()
        let canonical: String
        switch RequestedPath.text(p.path, wording).flatMap({ RequestedPath.resolveForRead($0, policy: policy, followRequested: p.followSymlinks.isTrue, wording) }) {
        case .success(let c): canonical = c
        case .failure(let f): return .failure(f)
        }
        let limit = min(p.maxBytes.clampedCount(default: Self.defaultMaxBytes, cap: FilesSettings.hardMaxBytes), policy.settings.maxBytes)

        var st = stat()
        guard stat(canonical, &st) == 0 else {
            let e = SystemError(errno, "stat", canonical)
            return .failure(TransferFailure(Self.classify(e), "stat failed: \(e.jsString)", canonicalPath: canonical))
        }
        if (st.st_mode & S_IFMT) == S_IFDIR { return .failure(TransferFailure(.isDirectory, "path is a directory", canonicalPath: canonical)) }
        if (st.st_mode & S_IFMT) != S_IFREG { return .failure(TransferFailure(.readError, "path is not a regular file", canonicalPath: canonical)) }
        if Int(st.st_size) > limit {
            return .failure(TransferFailure(.fileTooLarge, "file size \(st.st_size) exceeds limit \(limit)", canonicalPath: canonical))
        }
        if p.preflightOnly.isTrue {
            return .success(FileFetchResult(path: canonical, size: Int(st.st_size), mimeType: "", base64: "", sha256: "", preflightOnly: true))
        }

        // O_NONBLOCK: a FIFO put in its place after the stat must not hang the read.
        let fd: Int32
        switch CanonicalPath.openVerified(canonical, flags: O_RDONLY | O_NONBLOCK) {
        case .open(let d): fd = d
        case .failed(let e): return .failure(TransferFailure(Self.classify(e), "read failed: \(e.jsString)", canonicalPath: canonical))
        case .moved: return .failure(TransferFailure(.readError, "read failed: the path changed while it was opened", canonicalPath: canonical))
        }
        defer { close(fd) }
        var opened = stat()
        guard fstat(fd, &opened) == 0, (opened.st_mode & S_IFMT) == S_IFREG else {
            return .failure(TransferFailure(.readError, "path is not a regular file", canonicalPath: canonical))
        }
        // Another name of a private file (a hard link to the device key) is that file.
        if opened.st_nlink > 1, policy.privateInodes().contains(FileID(opened)) {
            return .failure(TransferFailure(.policyDenied, "\(canonical) is another name (a hard link) of a file in the node's own state, which the files capability never reads (no setting changes this)"))
        }
        let bytes: [UInt8]
        switch Self.read(fd, atMost: limit + 1) {
        case .success(let b): bytes = b
        case .failure(let failure):
            let e = SystemError(failure.code, "read", canonical)
            return .failure(TransferFailure(Self.classify(e), "read failed: \(e.jsString)", canonicalPath: canonical))
        }
        if bytes.count > limit {
            return .failure(TransferFailure(.fileTooLarge, "read \(bytes.count) bytes exceeds limit \(limit)", canonicalPath: canonical))
        }
        let mime = await MimeTypes.detect(fd: fd, name: canonical)
        return .success(FileFetchResult(path: canonical, size: bytes.count, mimeType: mime, base64: Base64.encode(bytes),
                                        sha256: SHA256.hexDigest(bytes)))
    }

    static func classify(_ e: SystemError) -> TransferCode {
        switch e.errno {
        case ENOENT: return .notFound
        case EACCES, EPERM: return .permissionDenied
        case EISDIR: return .isDirectory
        default: return .readError
        }
    }

    /// Up to `atMost` bytes from the descriptor's start.
    static func read(_ fd: Int32, atMost: Int) -> Result<[UInt8], Errno> {
        var out = [UInt8]()
        var buf = [UInt8](repeating: 0, count: 1 << 20)
        while out.count < atMost {
            let n = pread(fd, &buf, min(buf.count, atMost - out.count), off_t(out.count))
            if n < 0 { if errno == EINTR || errno == EAGAIN { continue }; return .failure(Errno.current) }
            if n == 0 { break }
            out += buf[0..<n]
        }
        return .success(out)
    }
}
