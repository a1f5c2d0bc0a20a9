import Foundation
@testable import Support
import Testing

/// FileTrust.walk reaches a path one component at a time: links are followed only when their
/// owner is root or this account (another account could repoint one at any time), every directory
/// on the way passes the rule, and loops end.
struct FileTrustWalkTests {
    @Test func linksAreFollowedOnlyWhenTheirOwnerIsTrusted() throws {
        let dir = NSTemporaryDirectory() + "ocn-walk-\(UUID().uuidString.prefix(8))"
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try FileManager.default.createDirectory(atPath: dir + "/real/sub", withIntermediateDirectories: true)
        chmod(dir, 0o755); chmod(dir + "/real", 0o755); chmod(dir + "/real/sub", 0o755)
        _ = FileManager.default.createFile(atPath: dir + "/real/sub/f", contents: Data("x".utf8), attributes: [.posixPermissions: 0o644])
        try FileManager.default.createSymbolicLink(atPath: dir + "/abs", withDestinationPath: dir + "/real")
        try FileManager.default.createSymbolicLink(atPath: dir + "/real/rel", withDestinationPath: "sub/../sub")
        let real = PathName.resolvingSymlinks(dir + "/real/sub/f")
        guard case .success(let (a, _)) = FileTrust.walk(dir + "/abs/rel/f") else { Issue.record("our links: refused"); return }
        #expect(a == real)
        #expect(FileTrust.problem(dir + "/abs/rel/f") == nil)
        try FileManager.default.createSymbolicLink(atPath: dir + "/loop", withDestinationPath: dir + "/loop")
        guard case .failure(let loop) = FileTrust.walk(dir + "/loop/f") else { Issue.record("a loop was walked"); return }
        #expect(loop.description.contains("too many symbolic links") || loop.description.contains("cannot stat"), "\(loop)")
        if geteuid() == 0 {
            lchown(dir + "/abs", 65534, 65534)
            let why = FileTrust.problem(dir + "/abs/rel/f")
            #expect(why?.contains("is a symbolic link owned by uid 65534") == true, "\(String(describing: why))")
            #expect(FileTrust.directoryProblem(dir + "/abs")?.contains("owned by uid 65534") == true)
            #expect(FileTrust.directoryProblem(dir + "/real") == nil, "the real path itself is fine")
        }
    }
}
