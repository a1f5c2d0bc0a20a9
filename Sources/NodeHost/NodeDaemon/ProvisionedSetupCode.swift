import Config
import Glibc
import Support

/// A setup code the node was provisioned with (`openclaw-node provision`, from the boot
/// partition), kept in the state directory — private, 0600, never in a config file — until the
/// gateway session it opens is up; then it is spent and removed. The daemon uses it when the
/// config names no setup code of its own.
public enum ProvisionedSetupCode {
    public static let fileName = "setup-code"

    public static func path(stateDir: String) -> String { stateDir + "/" + fileName }

    /// The stored code, or nil.
    public static func read(stateDir: String) -> String? {
        guard let text = FileSystem.readText(path(stateDir: stateDir))?.trimmed(), !text.isEmpty else { return nil }
        return text
    }

    /// Stores `code` (0600), owned by the state directory's owner when this runs as root for a
    /// service account.
    public static func store(_ code: String, stateDir: String) throws(FileSystem.Failure) {
        let file = path(stateDir: stateDir)
        try FileSystem.write(Array((code + "\n").utf8), to: file, mode: 0o600)
        FileSystem.matchOwner(file, of: stateDir)
    }

    /// The session it opened is up: the code is spent (a bootstrap token works once).
    public static func spent(stateDir: String) -> Bool {
        unlink(path(stateDir: stateDir)) == 0
    }
}
