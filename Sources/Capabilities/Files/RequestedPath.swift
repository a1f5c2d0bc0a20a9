import Glibc
import Support

/// The first steps every file-transfer command takes with its `path`: upstream's input checks
/// (each command words them its own way), then the node's: no "..", the canonical path inside the
/// policy, and only then whether it exists and whether a link was followed — so a path outside
/// the globs gets POLICY_DENIED and nothing about what is there.
struct RequestedPath {
    struct Wording {
        var required = "path required"
        var nul = "path contains NUL byte"
        var notFound = "file not found"
        /// dir.fetch reports a permission failure as READ_ERROR.
        var permissionCode: TransferCode = .permissionDenied
        static let write = Wording(required: "path is required", nul: "path must not contain NUL bytes")
    }

    /// The path as sent, checked the way upstream checks it.
    static func text(_ value: JSONValue?, _ wording: Wording) -> Result<String, TransferFailure> {
        guard case .string(let path)? = value, !path.isEmpty else { return .failure(TransferFailure(.invalidPath, wording.required)) }
        if path.unicodeScalars.contains("\0") { return .failure(TransferFailure(.invalidPath, wording.nul)) }
        guard path.hasPrefix("/") else { return .failure(TransferFailure(.invalidPath, "path must be absolute")) }
        if CanonicalPath.hasParentSegment(path) { return .failure(TransferFailure(.policyDenied, PathPolicy.parentSegmentDenial)) }
        return .success(path)
    }

    /// Upstream's message when a link was met with followSymlinks off, and the node's when the
    /// request allowed links but the node's config does not.
    static func symlinkMessage(requested: Bool, kind: PathPolicy.Kind) -> String {
        if requested {
            return "path traverses a symlink; refusing because the node's capabilities.files.followSymlinks is false (set it to true in the node's config to allow, or send the canonical path)"
        }
        let key = kind == .read ? "allowReadPaths" : "allowWritePaths"
        return "path traverses a symlink; refusing because followSymlinks=false (set plugins.entries.file-transfer.config.nodes.<node>.followSymlinks=true to allow, or update \(key) to the canonical path)"
    }

    /// An existing path to read: its canonical form once the policy allows it and, unless links
    /// may be followed, it is the path as sent.
    static func resolveForRead(_ path: String, policy: PathPolicy, followRequested: Bool,
                               _ wording: Wording) -> Result<String, TransferFailure> {
        let normalized = CanonicalPath.normalize(path)
        switch CanonicalPath.real(normalized) {
        case .success(let canonical):
            if let why = policy.denial(.read, canonical, shown: normalized) { return .failure(TransferFailure(.policyDenied, why)) }
            if canonical != normalized && !(followRequested && policy.settings.followSymlinks) {
                return .failure(TransferFailure(.symlinkRedirect, symlinkMessage(requested: followRequested, kind: .read), canonicalPath: canonical))
            }
            return .success(canonical)
        case .failure(let e):
            // What it would be, for the policy: a missing path outside the globs is not reported missing.
            if let why = policy.denial(.read, CanonicalPath.fromExistingAncestor(normalized), shown: normalized) {
                return .failure(TransferFailure(.policyDenied, why))
            }
            if e.errno == ENOENT { return .failure(TransferFailure(.notFound, wording.notFound)) }
            return .failure(TransferFailure(e.isPermission ? wording.permissionCode : .readError, "realpath failed: \(e.jsString)"))
        }
    }
}
