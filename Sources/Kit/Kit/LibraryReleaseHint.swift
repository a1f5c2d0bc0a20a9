import Glibc
import Support

/// Why a library a bundle links cannot be found, when the cause is the package rather than the
/// machine: a package built for another Debian release needs sonames this release does not ship
/// (Debian 12's `libavcodec.so.59` on Debian 13, which has `libavcodec.so.61`), and then installing
/// "the package that ships it" is impossible — the right package is this node's own build for the
/// release.
enum LibraryReleaseHint {
    static let libraryDirectories = ["/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib/arm-linux-gnueabihf",
                                     "/lib/x86_64-linux-gnu", "/lib/aarch64-linux-gnu", "/usr/lib", "/lib"]

    /// For dlerror's "libavcodec.so.59: cannot open shared object file: …": the hint when this
    /// system has another version of that library, else nil.
    static func hint(forLoadError why: String) -> String? {
        // "<dependency>: cannot open shared object file…", possibly after "<bundle path>: ".
        guard let cut = why.firstRange(of: ": cannot open shared object file") else { return nil }
        let before = why[..<cut.lowerBound]
        let missing = PathName.lastComponent(String(before.split(separator: " ").last ?? ""))
        guard let range = missing.firstRange(of: ".so.") else { return nil }
        let stem = String(missing[..<range.upperBound])  // "libavcodec.so."
        var others: Set<String> = []
        for dir in libraryDirectories {
            for name in (try? FileSystem.contentsOfDirectory(dir)) ?? [] where name.hasPrefix(stem) {
                // The soname itself (libavcodec.so.61), not the full version (libavcodec.so.61.19.101).
                let version = name.dropFirst(stem.count).prefix { $0 != "." }
                if !version.isEmpty && stem + version != missing { others.insert(stem + version) }
            }
        }
        guard !others.isEmpty else { return nil }
        let release = DebianPackageName.hasTimeT64Names ? "+deb13 on Debian 13" : "+deb12 on Debian 12"
        return "this openclaw-node was built for another release: it needs \(missing), this system has \(others.sorted().joined(separator: ", ")); " +
            "install the openclaw-node package built for this release (\(release))"
    }
}
