import Glibc

/// Directories only the node's account may enter (a bundle's state directory, a browser profile).
public enum PrivateDirectory {
    /// Creates `path` and any missing parent, each mode 0700 (existing ones are left as they are).
    /// nil on success, else what failed.
    @discardableResult
    public static func create(_ path: String) -> String? {
        var built = path.hasPrefix("/") ? "" : "."
        for part in path.split(separator: "/") {
            built += "/" + part
            if mkdir(built, 0o700) != 0 && errno != EEXIST {
                return "cannot create \(built): \(String(cString: strerror(errno)))"
            }
        }
        return nil
    }

    /// A new empty directory of its own under $TMPDIR (or /tmp), mode 0700 (mkdtemp); nil when
    /// none can be made.
    public static func makeTemporary(prefix: String) -> String? {
        let base = ProcessEnvironment.value("TMPDIR").flatMap { $0.hasPrefix("/") ? $0 : nil } ?? "/tmp"
        var template = Array((base + "/" + prefix + ".XXXXXX").utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else { return nil }
        return String(cString: made)
    }
}
