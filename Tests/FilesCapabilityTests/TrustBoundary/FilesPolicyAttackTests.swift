import Foundation
@testable import Support
@testable import TestSupport
import Testing

/// What a gateway (or whoever holds its operator token) must not get from the files bundle, each
/// next to the legitimate use that still works: paths outside the globs, "..", links out of an
/// allowed directory (to the node's state, to /etc/shadow), the node's config, state and /proc
/// entry even under a glob of everything, writes through a linked parent or onto a link, clobbering
/// without overwrite, oversize content, non-canonical base64, and a hash mismatch that must leave
/// neither a file nor a temporary one behind.
@Suite(.serialized) struct FilesPolicyAttackTests {
    static func refused(_ b: JSONValue?, _ code: String = "POLICY_DENIED", naming key: String? = nil) -> Bool {
        guard let b, b["ok"] == false, b["code"]?.stringValue == code else { return false }
        return key.map { b["message"]?.stringValue?.contains($0) == true } ?? true
    }

    @Test func nothingIsReadOrWrittenWithoutGlobs() throws {
        let r = try FilesRig.start("") { data, _ in _ = FileManager.default.createFile(atPath: data + "/a.txt", contents: Data("a".utf8)) }
        defer { r.cleanup() }
        let fetch = r.body("file.fetch", ["path": r.data + "/a.txt"])
        #expect(Self.refused(fetch, naming: "capabilities.files.read"), "\(String(describing: fetch))")
        #expect(fetch?["message"]?.stringValue?.contains("deny by default") == true)
        #expect(Self.refused(r.body("file.write", ["path": r.data + "/b.txt", "contentBase64": "YQ=="]), naming: "capabilities.files.write"))
        #expect(!FileManager.default.fileExists(atPath: r.data + "/b.txt"))
        let list = try #require(r.invoke("fs.listDir", ["path": r.data]))
        #expect(list["error"]?["code"] == "POLICY_DENIED" && list["error"]?["message"]?.stringValue?.contains("capabilities.files.read") == true, "\(list)")
    }

    @Test func pathsOutsideTheGlobsAndParentSegmentsAreRefused() throws {
        let r = try FilesRig.start("read: ['$DATA/allowed/**'], write: ['$DATA/allowed/**']") { data, _ in
            _ = FileManager.default.createFile(atPath: data + "/secret.txt", contents: Data("secret".utf8))
            try FileManager.default.createDirectory(atPath: data + "/allowed", withIntermediateDirectories: true)
            _ = FileManager.default.createFile(atPath: data + "/allowed/ok.txt", contents: Data("ok".utf8))
        }
        defer { r.cleanup() }
        #expect(r.body("file.fetch", ["path": r.data + "/allowed/ok.txt"])?["ok"] == true)
        #expect(Self.refused(r.body("file.fetch", ["path": r.data + "/secret.txt"]), naming: "capabilities.files.read"))
        #expect(Self.refused(r.body("file.fetch", ["path": "/etc/hostname"])))
        // A missing path outside the globs is refused, not reported missing.
        #expect(Self.refused(r.body("file.fetch", ["path": r.data + "/nothing-here"])))
        let traversal = r.body("file.fetch", ["path": r.data + "/allowed/../secret.txt"])
        #expect(Self.refused(traversal) && traversal?["message"]?.stringValue?.contains("'..'") == true, "\(String(describing: traversal))")
        #expect(Self.refused(r.body("dir.list", ["path": r.data + "/allowed/.."])))
        #expect(Self.refused(r.body("dir.fetch", ["path": r.data])))
        #expect(Self.refused(r.body("file.write", ["path": r.data + "/allowed/../x.txt", "contentBase64": "YQ=="])))
        #expect(Self.refused(r.body("file.write", ["path": r.data + "/x.txt", "contentBase64": "YQ=="])))
        #expect(!FileManager.default.fileExists(atPath: r.data + "/x.txt"))
        let up = try #require(r.invoke("fs.listDir", ["path": r.data + "/allowed/../.."]))
        #expect(up["error"]?["code"] == "POLICY_DENIED", "\(up)")
    }

    @Test func linksOutOfAnAllowedDirectoryAreNotFollowed() throws {
        let r = try FilesRig.start("read: ['$DATA/**'], write: ['$DATA/**'], followSymlinks: true") { data, node in
            _ = FileManager.default.createFile(atPath: data + "/real.txt", contents: Data("real".utf8))
            try FileManager.default.createSymbolicLink(atPath: data + "/alias.txt", withDestinationPath: data + "/real.txt")
            try FileManager.default.createSymbolicLink(atPath: data + "/state", withDestinationPath: node.dir + "/state")
            try FileManager.default.createSymbolicLink(atPath: data + "/shadow", withDestinationPath: "/etc/shadow")
            try FileManager.default.createSymbolicLink(atPath: data + "/config", withDestinationPath: node.configPath)
        }
        defer { r.cleanup() }
        // A link inside the globs to a file inside them: refused unless followed, then served.
        let redirect = try #require(r.body("file.fetch", ["path": r.data + "/alias.txt"]))
        #expect(redirect["code"] == "SYMLINK_REDIRECT" && redirect["canonicalPath"]?.stringValue == r.data + "/real.txt", "\(redirect)")
        #expect(r.body("file.fetch", ["path": r.data + "/alias.txt", "followSymlinks": true])?["base64"]?.stringValue == "cmVhbA==")
        // Links out: whatever the request says, the canonical path decides, and where the link
        // points is not told (no canonicalPath).
        let stateFile = try #require(r.names(r.state).first { FileManager.default.fileExists(atPath: r.state + "/" + $0) && !$0.hasSuffix(".sock") })
        for follow in [false, true] {
            let viaLink = r.body("file.fetch", ["path": r.data + "/state/" + stateFile, "followSymlinks": follow])
            #expect(Self.refused(viaLink) && viaLink?["canonicalPath"] == nil, "\(String(describing: viaLink))")
            let shadow = r.body("file.fetch", ["path": r.data + "/shadow", "followSymlinks": follow])
            #expect(Self.refused(shadow), "\(String(describing: shadow))")
            // Nor does the refusal's message name the target.
            #expect(shadow?.jsonString().contains("/etc/shadow") == false && viaLink?.jsonString().contains(r.node.dir + "/state") == false,
                    "\(String(describing: shadow)) \(String(describing: viaLink))")
            #expect(Self.refused(r.body("file.fetch", ["path": r.data + "/config", "followSymlinks": follow])))
            #expect(Self.refused(r.body("dir.list", ["path": r.data + "/state", "followSymlinks": follow])))
            #expect(Self.refused(r.body("dir.fetch", ["path": r.data + "/state", "followSymlinks": follow])))
        }
        // The data directory itself holds only links to them: tar stores links, not what they name.
        let tar = try #require(r.body("dir.fetch", ["path": r.data]))
        #expect(tar["ok"] == true && (tar["tarBytes"]?.intValue ?? 0) < 4096, "\(tar["message"] ?? tar)")
        let list = try #require(r.invoke("fs.listDir", ["path": r.data + "/state"]))
        #expect(list["error"]?["code"] == "POLICY_DENIED", "\(list)")
    }

    @Test func aHardLinkToTheNodesStateIsTheNodesState() throws {
        let r = try FilesRig.start("read: ['$DATA/**']")
        defer { r.cleanup() }
        let stateFile = try #require(r.names(r.state).first { FileSystem.isRegularFile(r.state + "/" + $0) }, "\(r.names(r.state))")
        try FileManager.default.createDirectory(atPath: r.data + "/tree", withIntermediateDirectories: true)
        try FileManager.default.linkItem(atPath: r.state + "/" + stateFile, toPath: r.data + "/tree/copy")
        _ = FileManager.default.createFile(atPath: r.data + "/tree/plain.txt", contents: Data("plain".utf8))
        #expect(r.body("file.fetch", ["path": r.data + "/tree/plain.txt"])?["ok"] == true)
        #expect(Self.refused(r.body("file.fetch", ["path": r.data + "/tree/copy"])))
        #expect(Self.refused(r.body("dir.fetch", ["path": r.data + "/tree"])))
    }

    @Test func theNodesOwnFilesStayPrivateUnderAGlobOfEverything() throws {
        let r = try FilesRig.start("read: ['/**'], write: ['/**'], followSymlinks: true")
        defer { r.cleanup() }
        #expect(r.body("file.fetch", ["path": "/etc/hostname"])?["ok"] == true, "the glob does allow the rest")
        #expect(Self.refused(r.body("file.fetch", ["path": r.node.configPath])))
        // The backups an editor leaves beside the config (made now, after the node started) give it away too.
        for backup in [r.node.configPath + "~", PathName.directory(r.node.configPath) + "/." + PathName.lastComponent(r.node.configPath) + ".swp"] {
            try "{ gateway: { token: 'secret-in-a-backup' } }".write(toFile: backup, atomically: true, encoding: .utf8)
            #expect(Self.refused(r.body("file.fetch", ["path": backup])), "\(backup)")
        }
        #expect(Self.refused(r.body("dir.list", ["path": r.state])))
        #expect(Self.refused(r.body("dir.fetch", ["path": r.node.dir])), "a tree holding the state directory")
        #expect(Self.refused(r.body("file.fetch", ["path": "/proc/self/environ", "followSymlinks": true])), "the daemon's environment")
        #expect(Self.refused(r.body("file.fetch", ["path": "/proc/\(r.node.process!.pid)/cmdline"])))
        #expect(Self.refused(r.body("file.write", ["path": r.state + "/planted.json", "contentBase64": "e30=", "overwrite": true])))
        #expect(Self.refused(r.body("file.write", ["path": r.node.configPath, "contentBase64": "e30=", "overwrite": true])))
        #expect(!FileManager.default.fileExists(atPath: r.state + "/planted.json") && r.read(r.node.configPath)?.contains("files") == true)
        #expect(Self.refused(r.body("dir.list", ["path": r.state + "/files/uploads"])), "staged uploads in the state directory")
        let list = try #require(r.invoke("fs.listDir", ["path": r.state]))
        #expect(list["error"]?["code"] == "POLICY_DENIED", "\(list)")
        #expect(r.invoke("fs.listDir", ["path": r.node.dir])?["ok"] == true, "the names in the home directory")
    }

    /// The daemon's threads have /proc/<tid> entries too (not listed, but there): a /proc/** glob
    /// once read the daemon's environment through one. And a secret the config names as ${NAME}
    /// is wiped from the initial environment block that /proc/<pid>/environ shows.
    @Test func theDaemonsThreadsAndEnvironmentBlockHoldNoSecret() throws {
        let secret = "s3cr3t-\(UUID().uuidString.prefix(8))"
        // A value of the config names the variable (an MCP header would: `Bearer ${FILES_TEST_SECRET}`;
        // this rig has only the files section, so a glob of it does; comments name nothing).
        let r = try FilesRig.start("read: ['/proc/**', '/etc/**', '/nonexistent/${FILES_TEST_SECRET}']", env: ["FILES_TEST_SECRET": secret])
        defer { r.cleanup() }
        let pid = r.node.process!.pid
        let environ = (try? Data(contentsOf: URL(fileURLWithPath: "/proc/\(pid)/environ"))) ?? Data()
        #expect(!environ.isEmpty && !String(decoding: environ, as: UTF8.self).contains(secret), "the secret is in /proc/\(pid)/environ")
        let tids = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        #expect(tids.count > 1, "\(tids)")
        var live = 0
        for tid in tids where tid != "\(pid)" {
            let environ = r.body("file.fetch", ["path": "/proc/\(tid)/environ"]), fds = r.body("dir.list", ["path": "/proc/\(tid)/fd"])
            // The daemon's worker threads come and go: one that ended since the listing has no
            // entry left to refuse (nothing to read either). Every thread still there is refused.
            if !FileManager.default.fileExists(atPath: "/proc/\(pid)/task/\(tid)") {
                #expect((Self.refused(environ) || Self.refused(environ, "NOT_FOUND")) && (Self.refused(fds) || Self.refused(fds, "NOT_FOUND")), "thread \(tid)")
                continue
            }
            live += 1
            #expect(Self.refused(environ), "thread \(tid)")
            #expect(Self.refused(fds), "thread \(tid)")
        }
        #expect(live > 0, "no thread of the daemon was still there to ask about: \(tids)")
        // Other processes' entries are the globs' business: the legitimate use still works.
        #expect(r.body("file.fetch", ["path": "/proc/version"])?["ok"] == true)
    }

    @Test func writesThroughLinksAndClobberingAreRefused() throws {
        let r = try FilesRig.start("read: ['$DATA/**'], write: ['$DATA/out/**']") { data, node in
            try FileManager.default.createDirectory(atPath: data + "/out/real", withIntermediateDirectories: true)
            try FileManager.default.createSymbolicLink(atPath: data + "/out/tostate", withDestinationPath: node.dir + "/state")
            try FileManager.default.createSymbolicLink(atPath: data + "/out/alias", withDestinationPath: data + "/out/real")
            _ = FileManager.default.createFile(atPath: data + "/victim.txt", contents: Data("victim".utf8))
            try FileManager.default.createSymbolicLink(atPath: data + "/out/victim-link", withDestinationPath: data + "/victim.txt")
            _ = FileManager.default.createFile(atPath: data + "/out/keep.txt", contents: Data("keep".utf8))
        }
        defer { r.cleanup() }
        let payload = Data("planted".utf8).base64EncodedString()
        #expect(r.body("file.write", ["path": r.data + "/out/real/ok.txt", "contentBase64": payload])?["ok"] == true)
        // A parent that is a link into the node's state: refused by the policy (canonical path).
        #expect(Self.refused(r.body("file.write", ["path": r.data + "/out/tostate/planted.json", "contentBase64": payload, "followSymlinks": true])))
        #expect(!FileManager.default.fileExists(atPath: r.state + "/planted.json"))
        // A parent that is a link inside the globs: refused unless links may be followed.
        let redirect = try #require(r.body("file.write", ["path": r.data + "/out/alias/x.txt", "contentBase64": payload]))
        #expect(redirect["code"] == "SYMLINK_REDIRECT" && redirect["canonicalPath"]?.stringValue == r.data + "/out/real/x.txt", "\(redirect)")
        let nodeSays = try #require(r.body("file.write", ["path": r.data + "/out/alias/x.txt", "contentBase64": payload, "followSymlinks": true]))
        #expect(nodeSays["code"] == "SYMLINK_REDIRECT" && nodeSays["message"]?.stringValue?.contains("capabilities.files.followSymlinks") == true)
        #expect(!FileManager.default.fileExists(atPath: r.data + "/out/real/x.txt"))
        // The target itself a link (to a file outside the write globs): never written through.
        let onto = try #require(r.body("file.write", ["path": r.data + "/out/victim-link", "contentBase64": payload, "overwrite": true]))
        #expect(onto["code"] == "SYMLINK_TARGET_DENIED", "\(onto)")
        #expect(r.read(r.data + "/victim.txt") == "victim")
        // No overwrite without overwrite:true.
        #expect(r.body("file.write", ["path": r.data + "/out/keep.txt", "contentBase64": payload])?["code"] == "EXISTS_NO_OVERWRITE")
        #expect(r.read(r.data + "/out/keep.txt") == "keep")
    }

    /// A sparse file has almost no blocks, so du-style checks pass it, and tar then reads every hole
    /// as zeros (gzip squeezes 64 GiB of them to little, burning CPU until the tar timeout). Its
    /// apparent size counts: refused at once. A small sparse file still archives.
    @Test func aSparseFileDoesNotBurnTheTarTimeout() throws {
        let r = try FilesRig.start("read: ['$DATA/**']") { data, _ in
            try FileManager.default.createDirectory(atPath: data + "/sp", withIntermediateDirectories: true)
            _ = FileManager.default.createFile(atPath: data + "/sp/hole", contents: nil)
            truncate(data + "/sp/hole", 64 << 30)
            try FileManager.default.createDirectory(atPath: data + "/small", withIntermediateDirectories: true)
            _ = FileManager.default.createFile(atPath: data + "/small/hole", contents: nil)
            truncate(data + "/small/hole", 1 << 20)
        }
        defer { r.cleanup() }
        let started = Date()
        let big = try #require(r.body("dir.fetch", ["path": r.data + "/sp"]))
        #expect(big["code"] == "TREE_TOO_LARGE", "\(big)")
        #expect(Date().timeIntervalSince(started) < 10, "took \(Date().timeIntervalSince(started)) s")
        let small = try #require(r.body("dir.fetch", ["path": r.data + "/small"]))
        #expect(small["ok"] == true && small["tarBase64"]?.stringValue?.isEmpty == false, "\(small)")
        #expect(r.body("dir.fetch", ["path": r.data + "/sp", "preflightOnly": true])?["code"] != "TREE_TOO_LARGE", "preflight still lists it")
    }

    /// terminal.upload keeps at most upstream's budgets staged (64 uploads, 256 MiB); past them it
    /// refuses with upstream's code and words, and takes uploads again once room is made.
    @Test func stagedUploadsHaveABudget() throws {
        let runtime = TestPaths.tempDir("files-budget")
        chmod(runtime, 0o700)
        let root = runtime + "/openclaw-node/uploads"
        let r = try FilesRig.start("read: ['$DATA/**']", env: ["XDG_RUNTIME_DIR": runtime]) { _, _ in
            // 62 recent uploads from before, and one of 250 MiB (sparse: its size counts).
            for i in 0..<62 {
                try FileManager.default.createDirectory(atPath: root + "/openclaw-terminal-upload-SEED\(i)", withIntermediateDirectories: true,
                                                        attributes: [.posixPermissions: 0o700])
            }
            _ = FileManager.default.createFile(atPath: root + "/openclaw-terminal-upload-SEED0/big", contents: nil)
            truncate(root + "/openclaw-terminal-upload-SEED0/big", 250 << 20)
        }
        defer { r.cleanup(); try? FileManager.default.removeItem(atPath: runtime) }
        let small = Data("ok".utf8).base64EncodedString(), sevenMiB = Data(count: 7 << 20).base64EncodedString()
        // Bytes first: 250 MiB + 7 MiB is over 256 MiB.
        let tooBig = try #require(r.invoke("terminal.upload", ["name": "a.bin", "contentBase64": sevenMiB]))
        #expect(tooBig["error"]?["code"] == "TERMINAL_UPLOAD_STAGING_EXHAUSTED", "\(tooBig)")
        #expect(tooBig["error"]?["message"]?.stringValue?.contains("terminal upload staging limit reached (256 MiB or 64 files)") == true, "\(tooBig)")
        // Then directories: two more small ones fit (63, 64), the next does not.
        let b = r.invoke("terminal.upload", ["name": "b.txt", "contentBase64": small]); #expect(b?["ok"] == true, "\(String(describing: b))")
        #expect(r.invoke("terminal.upload", ["name": "c.txt", "contentBase64": small])?["ok"] == true)
        let full = try #require(r.invoke("terminal.upload", ["name": "d.txt", "contentBase64": small]))
        #expect(full["error"]?["code"] == "TERMINAL_UPLOAD_STAGING_EXHAUSTED", "\(full)")
        // Room made (the user moved staged files away): uploads are taken again.
        try FileManager.default.removeItem(atPath: root + "/openclaw-terminal-upload-SEED0")
        #expect(r.invoke("terminal.upload", ["name": "e.bin", "contentBase64": sevenMiB])?["ok"] == true)
    }

    /// dir.list of a huge directory: it read, stat'ed and sorted all of it for every page (200k
    /// entries: ~190 MB and 5 s a page). Paging through 200,000 names now keeps the daemon's peak
    /// memory within tens of MiB, and the pages join to the whole directory in order, once each.
    @Test func pagingAHugeDirectoryStaysSmall() throws {
        let count = 200_000
        let r = try FilesRig.start("read: ['$DATA/**']") { data, _ in
            try FileManager.default.createDirectory(atPath: data + "/many", withIntermediateDirectories: true)
            for i in 0..<count {
                let fd = open(data + "/many/f" + String(format: "%06d", i), O_CREAT | O_WRONLY | O_CLOEXEC, 0o644)
                if fd >= 0 { close(fd) }
            }
        }
        defer { r.cleanup() }
        let pid = r.node.process!.pid
        func hwmKiB() -> Int {
            let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
            let line = status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") } ?? ""
            return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
        }
        _ = r.body("dir.list", ["path": r.data, "maxEntries": 1])
        let before = hwmKiB()
        var names: [String] = []
        var token: String? = nil
        let started = Date()
        repeat {
            var params: [String: Any] = ["path": r.data + "/many", "maxEntries": 5000]
            if let token { params["pageToken"] = token }
            let page = try #require(r.body("dir.list", params), "page after \(names.count)")
            names += (page["entries"]?.arrayValue ?? []).compactMap { $0["name"]?.stringValue }
            token = page["nextPageToken"]?.stringValue
        } while token != nil && names.count <= count
        let took = Date().timeIntervalSince(started)
        #expect(names.count == count && names == (0..<count).map { "f" + String(format: "%06d", $0) }, "\(names.count) names")
        let grew = (hwmKiB() - before) >> 10
        #expect(grew < 64, "paging 200,000 entries grew the daemon's peak memory by \(grew) MiB")
        print("dir.list: 40 pages of 5000 of a 200,000-entry directory in \(String(format: "%.1f", took)) s, peak memory +\(grew) MiB")
    }

    @Test func oversizeBadBase64AndHashMismatchLeaveNothingBehind() throws {
        let r = try FilesRig.start("read: ['$DATA/**'], write: ['$DATA/out/**'], maxBytes: 1024") { data, _ in
            try FileManager.default.createDirectory(atPath: data + "/out", withIntermediateDirectories: true)
            _ = FileManager.default.createFile(atPath: data + "/out/keep.txt", contents: Data("keep".utf8))
            _ = FileManager.default.createFile(atPath: data + "/big.bin", contents: Data(count: 2048))
        }
        defer { r.cleanup() }
        let small = Data(count: 1024).base64EncodedString(), big = Data(count: 1025).base64EncodedString()
        #expect(r.body("file.write", ["path": r.data + "/out/small.bin", "contentBase64": small])?["ok"] == true)
        let over = try #require(r.body("file.write", ["path": r.data + "/out/big.bin", "contentBase64": big]))
        #expect(over["code"] == "FILE_TOO_LARGE" && over["message"]?.stringValue?.contains("capabilities.files.maxBytes") == true, "\(over)")
        #expect(r.body("file.fetch", ["path": r.data + "/big.bin", "maxBytes": 4096])?["message"] == "file size 2048 exceeds limit 1024")
        #expect(r.body("dir.fetch", ["path": r.data, "maxBytes": 4096])?["message"] == "directory tree exceeds estimated size limit (1024 bytes raw)")

        for bad in ["aGV sbG8=", "aGVsbG8=!", "QR=="] {
            let b = r.body("file.write", ["path": r.data + "/out/bad.txt", "contentBase64": bad])
            #expect(b?["code"] == "INVALID_BASE64" && b?["message"] == "contentBase64 is not valid base64", "\(bad): \(String(describing: b))")
        }
        let upload = try #require(r.invoke("terminal.upload", ["name": "x.txt", "contentBase64": "aGVsbG8"]))
        #expect(upload["error"]?["message"] == "INVALID_REQUEST: invalid terminal upload encoding", "\(upload)")

        let wrong = String(repeating: "0", count: 64)
        for (path, overwrite) in [(r.data + "/out/keep.txt", true), (r.data + "/out/new.txt", false)] {
            let b = try #require(r.body("file.write", ["path": path, "contentBase64": "aGVsbG8=", "overwrite": overwrite, "expectedSha256": wrong]))
            #expect(b["code"] == "INTEGRITY_FAILURE" && b["message"]?.stringValue == "sha256 mismatch: expected \(wrong), got \(FilesRig.sha256(Array("hello".utf8)))", "\(b)")
        }
        #expect(r.read(r.data + "/out/keep.txt") == "keep")
        #expect(r.names(r.data + "/out") == ["keep.txt", "small.bin"], "no file and no .tmp left: \(r.names(r.data + "/out"))")
    }

    @Test func theHardLimitHoldsWhateverTheConfigSays() throws {
        let r = try FilesRig.start("write: ['$DATA/**']")
        defer { r.cleanup() }
        let b = try #require(r.body("file.write", ["path": r.data + "/huge.bin", "contentBase64": Data(count: 16 << 20 + 1).base64EncodedString()], wait: 120))
        #expect(b["code"] == "FILE_TOO_LARGE" && b["message"] == "decoded content is 16777217 bytes; maximum is 16777216 bytes (16 MB)", "\(b)")
        #expect(r.names(r.data).isEmpty)
    }
}
