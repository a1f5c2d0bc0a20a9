import Foundation
@testable import Support
@testable import TestSupport
import Testing

/// The files bundle used as intended, through the real daemon and the test gateway: a directory
/// picked, an upload staged 0600, files fetched with their sha256 and MIME type, written
/// atomically, a directory listed in pages and fetched as a tarball that tar reads. The attacks
/// that must fail next to these: TrustBoundary/FilesPolicyAttackTests.
@Suite(.serialized) struct FilesCommandsTests {
    static let policy = "read: ['$DATA/**'], write: ['$DATA/out/**']"

    @Test func listDirShowsSubdirectoriesVisibleFirstInByteOrder() throws {
        let r = try FilesRig.start(Self.policy + ", followSymlinks: true") { data, _ in
            for d in ["b", "a", ".hidden", "Z", "a/inner"] { try FileManager.default.createDirectory(atPath: data + "/" + d, withIntermediateDirectories: true) }
            _ = FileManager.default.createFile(atPath: data + "/file.txt", contents: Data("x".utf8))
            try FileManager.default.createSymbolicLink(atPath: data + "/link", withDestinationPath: data + "/a")
            try FileManager.default.createSymbolicLink(atPath: data + "/dangling", withDestinationPath: data + "/nothing")
        }
        defer { r.cleanup() }
        let res = try #require(r.invoke("fs.listDir", ["path": r.data + "/"]), "\(r.node.log.suffix(3000))")
        #expect(res["ok"] == true, "\(res)")
        let p = try #require(res["payload"])
        // Upstream's closed result: nothing but path, parent, home, entries (and name, path, hidden).
        #expect(Set(p.objectValue?.keys.map { $0 } ?? []) == ["path", "parent", "home", "entries"], "\(p)")
        #expect(p["path"]?.stringValue == r.data && p["parent"]?.stringValue == (r.data as NSString).deletingLastPathComponent)
        #expect(p["home"]?.stringValue == r.node.dir)
        let entries = p["entries"]?.arrayValue ?? []
        #expect(entries.compactMap { $0["name"]?.stringValue } == ["Z", "a", "b", "link", ".hidden"], "\(entries)")
        #expect(entries.last?["hidden"] == true && entries.first?["hidden"] == nil)
        #expect(entries.first?["path"]?.stringValue == r.data + "/Z")
        #expect(entries.allSatisfy { Set($0.objectValue?.keys.map { $0 } ?? []).isSubset(of: ["name", "path", "hidden"]) })

        // Upstream's errors, as invoke errors.
        let relative = try #require(r.invoke("fs.listDir", ["path": "relative/dir"]))
        #expect(relative["error"]?["code"] == "INVALID_REQUEST" && relative["error"]?["message"] == "INVALID_REQUEST: fs.listDir path must be absolute", "\(relative)")
        let notString = try #require(r.invoke("fs.listDir", ["path": 5]))
        #expect(notString["error"]?["message"] == "INVALID_REQUEST: path must be a string", "\(notString)")
        let missing = try #require(r.invoke("fs.listDir", ["path": r.data + "/nope"]))
        #expect(missing["error"]?["message"]?.stringValue == "INVALID_REQUEST: ENOENT: no such file or directory, scandir '\(r.data)/nope'", "\(missing)")
        #expect(r.gw.schemaErrors.isEmpty, "\(r.gw.schemaErrors)")
    }

    @Test func uploadIsStagedPrivatelyAndOldUploadsAreSwept() throws {
        let runtime = TestPaths.tempDir("files-xdg")
        chmod(runtime, 0o700)
        let root = runtime + "/openclaw-node/uploads"
        let old = root + "/openclaw-terminal-upload-OLD000", recent = root + "/openclaw-terminal-upload-NEW000"
        let r = try FilesRig.start(Self.policy, env: ["XDG_RUNTIME_DIR": runtime]) { _, _ in
            for d in [old, recent] { try FileManager.default.createDirectory(atPath: d, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700]) }
            _ = FileManager.default.createFile(atPath: old + "/left.txt", contents: Data("old".utf8))
            // 25 hours old: the start-up scan removes it; the recent one stays.
            try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: -25 * 3600)], ofItemAtPath: old)
        }
        defer { r.cleanup(); try? FileManager.default.removeItem(atPath: runtime) }
        #expect(waitUntil(timeout: 10) { !FileManager.default.fileExists(atPath: old) }, "\(r.node.log.suffix(2000))")
        #expect(FileManager.default.fileExists(atPath: recent))

        let content = "col1,col2\n1,2\n"
        let res = try #require(r.invoke("terminal.upload", ["name": "../re:port?.csv", "contentBase64": Data(content.utf8).base64EncodedString()]))
        #expect(res["ok"] == true, "\(res)")
        let path = try #require(res["payload"]?["path"]?.stringValue)
        #expect(res["payload"]?["size"] == .number(Double(content.utf8.count)))
        #expect(Set(res["payload"]?.objectValue?.keys.map { $0 } ?? []) == ["path", "size"])
        let dir = (path as NSString).deletingLastPathComponent
        #expect((dir as NSString).deletingLastPathComponent == root, "\(path)")
        #expect((dir as NSString).lastPathComponent.hasPrefix("openclaw-terminal-upload-") && (dir as NSString).lastPathComponent.count == 31)
        #expect((path as NSString).lastPathComponent == "re_port_.csv")
        #expect(FilesRig.mode(path) == 0o600 && FilesRig.mode(dir) == 0o700 && FilesRig.mode(root) == 0o700)
        #expect(r.read(path) == content)
        // Each upload gets a directory of its own.
        let again = try #require(r.invoke("terminal.upload", ["name": "re:port?.csv", "contentBase64": Data(content.utf8).base64EncodedString()]))
        #expect(again["payload"]?["path"]?.stringValue != path && again["payload"]?["path"]?.stringValue?.hasSuffix("/re_port_.csv") == true)

        let missing = try #require(r.invoke("terminal.upload", ["name": "x"]))
        #expect(missing["error"]?["message"] == "INVALID_REQUEST: terminal upload name and content are required", "\(missing)")
    }

    @Test func uploadWithoutARuntimeDirectoryGoesToTheBundleState() throws {
        let r = try FilesRig.start(Self.policy)
        defer { r.cleanup() }
        let res = try #require(r.invoke("terminal.upload", ["name": "", "contentBase64": ""]))
        let path = try #require(res["payload"]?["path"]?.stringValue, "\(res)")
        #expect(path.hasPrefix(r.state + "/files/uploads/openclaw-terminal-upload-") && path.hasSuffix("/upload"), "\(path)")
        #expect(res["payload"]?["size"] == 0 && FilesRig.mode(path) == 0o600)
    }

    @Test func fetchGivesBytesSha256AndMimeType() throws {
        let r = try FilesRig.start(Self.policy) { data, _ in
            _ = FileManager.default.createFile(atPath: data + "/notes.txt", contents: Data("hello files\n".utf8))
            _ = FileManager.default.createFile(atPath: data + "/doc.json", contents: Data(#"{"a": [1, 2, 3]}"#.utf8))
            try FileManager.default.createDirectory(atPath: data + "/sub", withIntermediateDirectories: true)
        }
        defer { r.cleanup() }
        let b = try #require(r.body("file.fetch", ["path": r.data + "/notes.txt"]), "\(r.node.log.suffix(3000))")
        #expect(b["ok"] == true && b["path"]?.stringValue == r.data + "/notes.txt" && b["size"] == 12, "\(b)")
        #expect(b["sha256"]?.stringValue == FilesRig.sha256(Array("hello files\n".utf8)))
        #expect(b["base64"]?.stringValue == Data("hello files\n".utf8).base64EncodedString())
        #expect(b["mimeType"] == "text/plain", "\(b)")
        #expect(r.body("file.fetch", ["path": r.data + "/doc.json"])?["mimeType"] == "application/json")
        let pre = try #require(r.body("file.fetch", ["path": r.data + "/notes.txt", "preflightOnly": true]))
        #expect(pre["preflightOnly"] == true && pre["size"] == 12 && pre["base64"] == "" && pre["sha256"] == "" && pre["mimeType"] == "")

        // Upstream's codes and messages, in a body of an invoke that itself succeeded.
        func failure(_ params: [String: Any]) -> (String?, String?) {
            let b = r.body("file.fetch", params)
            #expect(b?["ok"] == false, "\(String(describing: b))")
            return (b?["code"]?.stringValue, b?["message"]?.stringValue)
        }
        #expect(failure([:]) == ("INVALID_PATH", "path required"))
        #expect(failure(["path": "notes.txt"]) == ("INVALID_PATH", "path must be absolute"))
        #expect(failure(["path": r.data + "/a\u{0}b"]) == ("INVALID_PATH", "path contains NUL byte"))
        #expect(failure(["path": r.data + "/missing.txt"]) == ("NOT_FOUND", "file not found"))
        #expect(failure(["path": r.data + "/sub"]) == ("IS_DIRECTORY", "path is a directory"))
        #expect(failure(["path": r.data + "/notes.txt", "maxBytes": 4]) == ("FILE_TOO_LARGE", "file size 12 exceeds limit 4"))
        #expect(r.body("file.fetch", ["path": r.data + "/sub"])?["canonicalPath"]?.stringValue == r.data + "/sub")
    }

    @Test func writeIsAtomicCheckedAndRefusesToClobber() throws {
        let r = try FilesRig.start(Self.policy) { data, _ in try FileManager.default.createDirectory(atPath: data + "/out", withIntermediateDirectories: true) }
        defer { r.cleanup() }
        let target = r.data + "/out/report.txt"
        let content = Array("first version\n".utf8)
        let w = try #require(r.body("file.write", ["path": target, "contentBase64": Data(content).base64EncodedString(),
                                                   "expectedSha256": FilesRig.sha256(content).uppercased()]), "\(r.node.log.suffix(3000))")
        #expect(w["ok"] == true && w["path"]?.stringValue == target && w["size"] == 14 && w["overwritten"] == false, "\(w)")
        #expect(w["sha256"]?.stringValue == FilesRig.sha256(content))
        #expect(r.read(target) == "first version\n")

        let second = Data("second\n".utf8).base64EncodedString()
        let refused = try #require(r.body("file.write", ["path": target, "contentBase64": second]))
        #expect(refused["code"] == "EXISTS_NO_OVERWRITE" && refused["message"]?.stringValue == "file already exists and overwrite is false: \(target)")
        #expect(r.read(target) == "first version\n")
        let replaced = try #require(r.body("file.write", ["path": target, "contentBase64": second, "overwrite": true]))
        #expect(replaced["ok"] == true && replaced["overwritten"] == true && r.read(target) == "second\n", "\(replaced)")

        let deep = r.data + "/out/new/deeper/file.bin"
        let noParent = try #require(r.body("file.write", ["path": deep, "contentBase64": "AAEC"]))
        #expect(noParent["code"] == "PARENT_NOT_FOUND" && noParent["message"]?.stringValue == "parent directory does not exist: \(r.data)/out/new/deeper")
        let pre = try #require(r.body("file.write", ["path": deep, "contentBase64": "AAEC", "createParents": true, "preflightOnly": true]))
        #expect(pre["ok"] == true && !FileManager.default.fileExists(atPath: r.data + "/out/new"), "\(pre)")
        let made = try #require(r.body("file.write", ["path": deep, "contentBase64": "AAEC", "createParents": true]))
        #expect(made["ok"] == true && (try? Data(contentsOf: URL(fileURLWithPath: deep))) == Data([0, 1, 2]), "\(made)")
        // The URL-safe alphabet without padding is taken, as upstream takes it.
        let url = try #require(r.body("file.write", ["path": r.data + "/out/u.bin", "contentBase64": "-_8"]))
        #expect(url["ok"] == true && (try? Data(contentsOf: URL(fileURLWithPath: r.data + "/out/u.bin"))) == Data([0xfb, 0xff]))
        // Nothing of the temporary files is left.
        #expect(!r.names(r.data + "/out").contains { $0.hasSuffix(".tmp") }, "\(r.names(r.data + "/out"))")
        let dir = try #require(r.body("file.write", ["path": r.data + "/out/new", "contentBase64": "", "overwrite": true]))
        #expect(dir["code"] == "IS_DIRECTORY", "\(dir)")
    }

    @Test func dirListPagesAndDirFetchMakesATarballTarReads() throws {
        let r = try FilesRig.start(Self.policy) { data, _ in
            try FileManager.default.createDirectory(atPath: data + "/tree", withIntermediateDirectories: true)
            for name in ["b.txt", "A.md", "c.png", "d.json", "e.log"] {
                _ = FileManager.default.createFile(atPath: data + "/tree/" + name, contents: Data(name.utf8))
            }
        }
        defer { r.cleanup() }
        let tree = r.data + "/tree"
        r.write("tree/sub/inner.txt", "inner")
        let first = try #require(r.body("dir.list", ["path": tree, "maxEntries": 4]), "\(r.node.log.suffix(3000))")
        #expect(first["ok"] == true && first["truncated"] == true && first["nextPageToken"] == "4", "\(first)")
        #expect(first["entries"]?.arrayValue?.compactMap { $0["name"]?.stringValue } == ["A.md", "b.txt", "c.png", "d.json"])
        let png = first["entries"]?.arrayValue?[2]
        #expect(png?["mimeType"] == "image/png" && png?["size"] == 5 && png?["isDir"] == false && png?["path"]?.stringValue == tree + "/c.png")
        #expect((png?["mtime"]?.doubleValue ?? 0) > 1_600_000_000_000)
        let second = try #require(r.body("dir.list", ["path": tree, "maxEntries": 4, "pageToken": "4"]))
        #expect(second["truncated"] == false && second["nextPageToken"] == nil, "\(second)")
        #expect(second["entries"]?.arrayValue?.map { [$0["name"], $0["isDir"], $0["mimeType"], $0["size"]] } == [["e.log", false, "text/plain", 5], ["sub", true, "inode/directory", 0]])
        #expect(r.body("dir.list", ["path": tree + "/b.txt"])?["code"] == "IS_FILE")
        #expect(r.body("dir.list", ["path": tree + "/none"])?["message"] == "path not found")

        let f = try #require(r.body("dir.fetch", ["path": tree]), "\(r.node.log.suffix(3000))")
        #expect(f["ok"] == true && f["path"]?.stringValue == tree, "\(f)")
        let tarball = try #require(Data(base64Encoded: f["tarBase64"]?.stringValue ?? ""))
        #expect(f["tarBytes"] == .number(Double(tarball.count)) && f["sha256"]?.stringValue == FilesRig.sha256(Array(tarball)))
        let saved = r.data + ".tgz"
        _ = FileManager.default.createFile(atPath: saved, contents: tarball)
        defer { try? FileManager.default.removeItem(atPath: saved) }
        let listed = try runProcess("/usr/bin/tar", ["-tzf", saved])
        #expect(listed.code == 0 && listed.stdout.contains("./sub/inner.txt") && listed.stdout.contains("./A.md"), "\(listed.stdout) \(listed.stderr)")
        let names = Set(f["entries"]?.arrayValue?.compactMap(\.stringValue) ?? [])
        #expect(names == ["A.md", "b.txt", "c.png", "d.json", "e.log", "sub", "sub/inner.txt"] && f["fileCount"] == 7, "\(names)")
        let pre = try #require(r.body("dir.fetch", ["path": tree, "preflightOnly": true]))
        #expect(pre["preflightOnly"] == true && pre["tarBase64"] == "" && pre["fileCount"] == 7, "\(pre)")
        #expect(pre["entries"]?.arrayValue?.compactMap(\.stringValue) == ["A.md", "b.txt", "c.png", "d.json", "e.log", "sub", "sub/inner.txt"])
        #expect(r.body("dir.fetch", ["path": tree + "/none"])?["message"] == "directory not found")
    }

    @Test func sixteenMebibytesRoundTripWithTheirSha256() throws {
        let r = try FilesRig.start(Self.policy) { data, _ in try FileManager.default.createDirectory(atPath: data + "/out", withIntermediateDirectories: true) }
        defer { r.cleanup() }
        var bytes = [UInt8](repeating: 0, count: 16 << 20)
        for i in bytes.indices { bytes[i] = UInt8(truncatingIfNeeded: i &* 2654435761 >> 13) }
        let sha = FilesRig.sha256(bytes)
        let target = r.data + "/out/big.bin"
        let w = try #require(r.body("file.write", ["path": target, "contentBase64": Data(bytes).base64EncodedString(), "expectedSha256": sha], wait: 180),
                             "\(r.node.log.suffix(2000))")
        #expect(w["ok"] == true && w["size"] == .number(Double(16 << 20)), "\(w["message"] ?? w)")
        let f = try #require(r.body("file.fetch", ["path": target, "maxBytes": 16 << 20], wait: 180))
        #expect(f["ok"] == true && f["sha256"]?.stringValue == sha, "\(f["message"] ?? "")")
        #expect(Data(base64Encoded: f["base64"]?.stringValue ?? "") == Data(bytes))
        // The default limit is 8 MiB.
        #expect(r.body("file.fetch", ["path": target])?["message"]?.stringValue == "file size 16777216 exceeds limit 8388608")
    }
}
