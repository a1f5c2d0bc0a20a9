import Glibc
import Kit
import Support

struct TerminalUploadParams: CommandParams {
    var name: JSONValue?
    var contentBase64: JSONValue?
}

struct TerminalUploadResult: Encodable, Sendable, Equatable {
    let path: String
    let size: Int
}

/// `terminal.upload`: one file from the Control UI's terminal, staged in a fresh directory of its
/// own (`openclaw-terminal-upload-XXXXXX`, mode 0700, made by mkdtemp) under the node's private
/// upload area, created exclusively with mode 0600 and removed after 24 hours (UploadSweeper).
struct TerminalUpload {
    static let maxBytes = 16 * 1024 * 1024
    /// The longest base64 text of `maxBytes`: ceil(16 MiB / 3) · 4.
    static let maxBase64Length = (maxBytes + 2) / 3 * 4
    static let directoryPrefix = "openclaw-terminal-upload-"
    static let maxNameBytes = 180

    let root: UploadRoot

    func run(_ p: TerminalUploadParams) async throws(NodeError) -> TerminalUploadResult {
        guard case .string(let name)? = p.name, case .string(let content)? = p.contentBase64 else {
            throw NodeError.invalidRequest("terminal upload name and content are required")
        }
        let bytes = try Self.decode(content)
        let job = self
        return try await BlockingExecutor.run("files-upload") { (_: CancelFlag) throws(NodeError) -> TerminalUploadResult in
            try job.stage(bytes, as: Self.sanitize(name))
        }
    }

    /// Canonical padded standard base64 only (what its bytes encode to, exactly).
    static func decode(_ text: String) throws(NodeError) -> [UInt8] {
        let utf8 = text.utf8
        let padding = text.hasSuffix("==") ? 2 : text.hasSuffix("=") ? 1 : 0
        let decodedSize = utf8.isEmpty ? 0 : utf8.count / 4 * 3 - padding
        if utf8.count > maxBase64Length || decodedSize > maxBytes { throw NodeError.invalidRequest("terminal upload exceeds \(maxBytes) bytes") }
        let alphabet = { (c: UInt8) in
            (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c == 43 || c == 47
        }
        guard utf8.count % 4 == 0, utf8.dropLast(padding).allSatisfy(alphabet), let bytes = Base64.decode(text),
              Base64.encode(bytes) == text else {
            throw NodeError.invalidRequest("invalid terminal upload encoding")
        }
        return bytes
    }

    /// Upstream's name rules: the last path part (backslashes as slashes), control characters and
    /// < > : " / \ | ? * % ! as "_", white space trimmed and trailing dots and spaces dropped,
    /// Windows device names prefixed "_", at most 180 bytes of UTF-8 (whole characters), "upload"
    /// when nothing is left.
    static func sanitize(_ name: String) -> String {
        let forbidden: Set<Unicode.Scalar> = ["<", ">", ":", "\"", "/", "\\", "|", "?", "*", "%", "!"]
        var base = Substring(name.replacingAll("\\", "/"))
        while base.count > 1 && base.hasSuffix("/") { base = base.dropLast() }
        if base == "/" { base = "" }
        if let slash = base.lastIndex(of: "/") { base = base[base.index(after: slash)...] }
        var cleaned = String.UnicodeScalarView()
        for s in base.unicodeScalars {
            cleaned.append(s.value <= 0x1f || s.value == 0x7f || forbidden.contains(s) ? "_" : s)
        }
        var text = String(cleaned).trimmingSpaces
        while let last = text.unicodeScalars.last, last == "." || last == " " { text.unicodeScalars.removeLast() }
        if isWindowsReserved(text) { text = "_" + text }
        let safe = text.isEmpty || text == "." || text == ".." ? "upload" : text
        var out = String.UnicodeScalarView(), bytes = 0
        for s in safe.unicodeScalars {
            let n = String(s).utf8.count
            if bytes + n > maxNameBytes { break }
            out.append(s); bytes += n
        }
        return out.isEmpty ? "upload" : String(out)
    }

    /// con, prn, aux, nul, com1–9, lpt1–9, alone or before a dot, any case.
    static func isWindowsReserved(_ name: String) -> Bool {
        let lower = name.lowercased()
        let stem = lower.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? lower
        if ["con", "prn", "aux", "nul"].contains(stem) { return true }
        if stem.count == 4, stem.hasPrefix("com") || stem.hasPrefix("lpt"), let d = stem.last, ("1"..."9").contains(d) { return true }
        return false
    }

    private func stage(_ bytes: [UInt8], as name: String) throws(NodeError) -> TerminalUploadResult {
        let base: String
        switch root.prepare() {
        case .success(let b): base = b
        case .failure(let why): throw NodeError.invalidRequest("cannot stage the upload: \(why.reason)")
        }
        return try UploadBudget.withRoom(in: base, for: bytes.count) { () throws(NodeError) -> TerminalUploadResult in
            try stage(bytes, as: name, in: base)
        }
    }

    private func stage(_ bytes: [UInt8], as name: String, in base: String) throws(NodeError) -> TerminalUploadResult {
        var template = Array((PathName.join(base, Self.directoryPrefix) + "XXXXXX").utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw NodeError.invalidRequest("cannot stage the upload: \(SystemError(errno, "mkdtemp", base))")
        }
        let directory = String(cString: made)
        let path = PathName.join(directory, name)
        var failure: SystemError?
        do throws(Errno) {
            let file = try FileDescriptor.open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, mode: 0o600)
            _ = fchmod(file.rawValue, 0o600)
            do throws(Errno) { try file.writeAll(bytes) } catch { failure = SystemError(error.code, "write", path) }
        } catch {
            failure = SystemError(error.code, "open", path)
        }
        if let failure {
            try? FileSystem.remove(directory)
            throw NodeError.invalidRequest("cannot stage the upload: \(failure)")
        }
        return TerminalUploadResult(path: path, size: bytes.count)
    }
}
