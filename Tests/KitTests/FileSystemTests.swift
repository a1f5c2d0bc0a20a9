import Glibc
import Support
import Testing

/// Support's file operations on a real directory (what FileManager did for the node).
@Suite struct FileSystemTests {
    @Test func createWriteReadListRemove() throws {
        let root = TestPaths.tempDir("fs")
        defer { try? FileSystem.remove(root) }
        let deep = root + "/a/b/c"
        try FileSystem.createDirectory(deep, intermediates: true, mode: 0o700)
        #expect(FileSystem.isDirectory(deep) && !FileSystem.isRegularFile(deep))
        #expect(PathName.permissions(deep) == 0o700)
        try FileSystem.write(Array("hello".utf8), to: deep + "/f.txt", mode: 0o600)
        #expect(FileSystem.readText(deep + "/f.txt") == "hello")
        #expect(PathName.permissions(deep + "/f.txt") == 0o600)
        #expect(FileSystem.size(deep + "/f.txt") == 5)
        // Atomic replace: no temporary file is left beside it.
        try FileSystem.write(Array("bye".utf8), to: deep + "/f.txt", mode: 0o600)
        #expect(try FileSystem.contentsOfDirectory(deep) == ["f.txt"])
        #expect(FileSystem.readText(deep + "/f.txt") == "bye")
        symlink(deep + "/f.txt", root + "/link")
        #expect(try FileSystem.destinationOfSymbolicLink(root + "/link") == deep + "/f.txt")
        // Removing a link leaves its target; removing a tree removes it all.
        try FileSystem.remove(root + "/link")
        #expect(FileSystem.exists(deep + "/f.txt") && !FileSystem.exists(root + "/link"))
        try FileSystem.remove(root + "/a")
        #expect(!FileSystem.exists(root + "/a"))
        try FileSystem.remove(root + "/a")  // already gone: fine
    }

    @Test func failuresNameThePathAndTheReason() {
        do { _ = try FileSystem.contents("/nonexistent/x"); Issue.record("read") } catch {
            #expect(error.description == "/nonexistent/x: No such file or directory")
        }
        do { try FileSystem.createDirectory("/proc/ocn-test/x", intermediates: true); Issue.record("created") } catch {
            #expect(error.description.hasPrefix("/proc/ocn-test"), "\(error)")
        }
        #expect(FileSystem.readBytes("/nonexistent") == nil)
        let root = TestPaths.tempDir("fs-x")
        defer { try? FileSystem.remove(root) }
        try? FileSystem.write([0x23], to: root + "/plain", mode: 0o644)
        #expect(FileSystem.isExecutableFile("/bin/sh") && !FileSystem.isExecutableFile(root + "/plain") && !FileSystem.isExecutableFile(root))
    }
}
