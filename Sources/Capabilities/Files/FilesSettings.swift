import Config
import Support

/// `capabilities.files` as the commands use it (the config check has made sure of the types).
struct FilesSettings: Sendable {
    /// Upstream's hard limit for every command that moves bytes.
    static let hardMaxBytes = 16 * 1024 * 1024

    let read: [PathGlob]
    let write: [PathGlob]
    let followSymlinks: Bool
    let maxBytes: Int
    let home: String

    init(_ section: BundleSection, home: String) {
        self.home = home
        let globs = { (key: String) in (section.strings(key) ?? []).filter { !$0.trimmingSpaces.isEmpty }.map { PathGlob($0, home: home) } }
        read = globs("read")
        write = globs("write")
        followSymlinks = section.bool("followSymlinks") ?? false
        maxBytes = min(max(1, section.int("maxBytes") ?? Self.hardMaxBytes), Self.hardMaxBytes)
    }
}
