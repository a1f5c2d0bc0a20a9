import Kit
import Support

/// The file-transfer commands (file.fetch, dir.list, dir.fetch, file.write) answer as upstream's
/// plugin host does: the invoke itself succeeds, and its payload is a body that says
/// `{ok:true, …}` or `{ok:false, code, message, canonicalPath?}`.
enum TransferReply<Body: Encodable & Sendable>: Encodable, Sendable {
    case ok(Body)
    case failed(TransferFailure)

    func encode(to encoder: Encoder) throws {
        switch self {
        case .ok(let body): try body.encode(to: encoder)
        case .failed(let failure): try failure.encode(to: encoder)
        }
    }
}

/// A refusal in a body: upstream's codes and messages, plus the node's POLICY_DENIED.
struct TransferFailure: Error, Encodable, Sendable, Equatable {
    let code: TransferCode
    let message: String
    var canonicalPath: String?

    init(_ code: TransferCode, _ message: String, canonicalPath: String? = nil) {
        self.code = code; self.message = message; self.canonicalPath = canonicalPath
    }

    private enum Keys: String, CodingKey { case ok, code, message, canonicalPath }
    func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: Keys.self)
        try c.encode(false, forKey: .ok)
        try c.encode(code.rawValue, forKey: .code)
        try c.encode(message, forKey: .message)
        try c.encodeIfPresent(canonicalPath, forKey: .canonicalPath)
    }
}

/// The body codes (upstream's, and POLICY_DENIED for the node's own policy).
enum TransferCode: String, Sendable {
    case invalidPath = "INVALID_PATH"
    case notFound = "NOT_FOUND"
    case permissionDenied = "PERMISSION_DENIED"
    case isDirectory = "IS_DIRECTORY"
    case isFile = "IS_FILE"
    case fileTooLarge = "FILE_TOO_LARGE"
    case treeTooLarge = "TREE_TOO_LARGE"
    case symlinkRedirect = "SYMLINK_REDIRECT"
    case symlinkTargetDenied = "SYMLINK_TARGET_DENIED"
    case readError = "READ_ERROR"
    case writeError = "WRITE_ERROR"
    case invalidBase64 = "INVALID_BASE64"
    case parentNotFound = "PARENT_NOT_FOUND"
    case existsNoOverwrite = "EXISTS_NO_OVERWRITE"
    case integrityFailure = "INTEGRITY_FAILURE"
    case policyDenied = "POLICY_DENIED"
}

extension NodeError.Code {
    /// fs.listDir outside capabilities.files.read (an invoke error: fs.listDir has no body).
    static let policyDenied: NodeError.Code = "POLICY_DENIED"
}

/// Params as upstream reads them: loosely (a wrong type means "absent", not an error).
extension Optional where Wrapped == JSONValue {
    /// `=== true`.
    var isTrue: Bool { self == .bool(true) }

    /// A positive number, floored and capped; else the default (upstream's clamp).
    func clampedCount(default value: Int, cap: Int) -> Int {
        guard case .number(let n)? = self, n.isFinite, n > 0 else { return value }
        return Int(min(n.rounded(.down), Double(cap)))
    }
}

extension SHA256 {
    static func hexDigest(_ bytes: some Collection<UInt8>) -> String { hash(bytes).map { $0.hex() }.joined() }
}
