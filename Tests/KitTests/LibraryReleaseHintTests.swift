@testable import Kit
import Testing

/// A bundle that cannot load because its package was built for another Debian release is told so
/// (install this release's build), not told to install a library the release does not have.
struct LibraryReleaseHintTests {
    @Test func anotherReleasesSonameIsNamedWithTheOneThisSystemHas() throws {
        // This machine's libc, under a version it does not have: what a package from another release sees.
        let hint = try #require(LibraryReleaseHint.hint(forLoadError: "libc.so.5: cannot open shared object file: No such file or directory"))
        #expect(hint.contains("needs libc.so.5, this system has libc.so.6"), "\(hint)")
        #expect(hint.contains("install the openclaw-node package built for this release"), "\(hint)")
        // After the bundle's own path, as dlerror words a dependency of a library it opened.
        #expect(LibraryReleaseHint.hint(forLoadError: "/usr/lib/openclaw-node/libopenclaw-video.so: libc.so.5: cannot open shared object file: No such file or directory") != nil)
    }

    @Test func aLibraryThatIsMissingAltogetherOrPresentGetsNoReleaseHint() {
        #expect(LibraryReleaseHint.hint(forLoadError: "libopenclaw-nothing.so.3: cannot open shared object file: No such file or directory") == nil)
        #expect(LibraryReleaseHint.hint(forLoadError: "libc.so.6: cannot open shared object file: No such file or directory") == nil)
        #expect(LibraryReleaseHint.hint(forLoadError: "undefined symbol: foo") == nil)
    }
}
