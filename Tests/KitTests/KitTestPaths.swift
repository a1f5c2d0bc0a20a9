import Foundation

/// Where the repository is, for tests that read its files (config.json5, the manifests). The kit's
/// tests build and run without the runtime, so they carry this one helper of their own.
enum TestPaths {
    static var repoRoot: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
    }

    /// A fresh private directory; the caller removes it (`defer`).
    static func tempDir(_ tag: String) -> String {
        let p = NSTemporaryDirectory() + "ocn-\(tag)-\(UUID().uuidString.prefix(8))"
        try? FileManager.default.createDirectory(atPath: p, withIntermediateDirectories: true)
        return p
    }
}
