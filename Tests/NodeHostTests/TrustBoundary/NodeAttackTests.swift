import Foundation
@testable import Support
@testable import TestSupport
import Testing

/// The trust boundary outside system.run (docs/SECURITY.md): the canvas, plugins, what children
/// inherit, the state directory, the bundles' libraries and the config's secrets — each attacked
/// through the real daemon or CLI, next to the legitimate use that must still work.
@Suite(.serialized) struct NodeAttackTests {
    // MARK: 6. the canvas loads no local files, whatever the gateway says

    @Test(.enabled(if: CanvasNode.browserInstalled, "needs chromium-headless-shell"))
    func aFileCanvasHostCannotReadTheNodesFiles() throws {
        for host in ["file:///", "FILE:///etc/", "file:///tmp/x/__openclaw__/cap/T"] {
            let c = try CanvasNode(canvasHost: host); defer { c.stop() }
            for target in ["/etc/passwd", c.node.configPath, "config.json5", "__openclaw__/canvas/x"] {
                let r = c.invoke("canvas.navigate", JSONValue.object(["url": .string(target)]).jsonString())
                #expect(!r.ok && r.error?["code"] == "INVALID_REQUEST", "\(host) \(target): \(String(describing: r.error))")
            }
            for target in ["file:///etc/passwd", "File:\(c.node.configPath)", "view-source:file:///etc/passwd", "filesystem:file:///x"] {
                let r = c.invoke("canvas.navigate", JSONValue.object(["url": .string(target)]).jsonString())
                #expect(!r.ok && r.error?["message"]?.stringValue?.contains("is not allowed for the canvas") == true, "\(target): \(String(describing: r.error))")
            }
            let here = c.eval("location.protocol + ' ' + document.body.innerText.length")
            #expect(here?.hasPrefix("file:") == false, "\(String(describing: here))")
        }
        // A web canvas host still works (CanvasTests covers it in full).
        let host = try CanvasHostServer(); defer { host.stop() }
        let c = try CanvasNode(canvasHost: host.base + "/__openclaw__/cap/TOKEN"); defer { c.stop() }
        #expect(c.invoke("canvas.navigate", #"{"url":"colors.html"}"#).ok, "\(c.node.log)")
        // 8. The browser does not inherit the gateway token the daemon was given.
        #expect(c.eval("window.pageName") == "colors")
        for pid in c.browserPids {
            let environ = (try? Data(contentsOf: URL(fileURLWithPath: "/proc/\(pid)/environ"))) ?? Data()
            #expect(!String(decoding: environ, as: UTF8.self).contains("OPENCLAW_GATEWAY"), "browser \(pid) has the node's secrets")
        }
    }

    // MARK: 7. plugins load only from trustworthy places

    /// A plugins directory with one plugin whose files are then made untrustworthy by `spoil`.
    static func pluginTree(_ spoil: (String) throws -> Void) throws -> (root: String, pdir: String) {
        let root = TestPaths.tempDir("plugins")
        let pdir = root + "/probe"
        try FileManager.default.createDirectory(atPath: pdir, withIntermediateDirectories: true)
        chmod(root, 0o755); chmod(pdir, 0o755)
        _ = FileManager.default.createFile(atPath: pdir + "/probe.py", contents: try Data(contentsOf: URL(fileURLWithPath: TestPaths.repoRoot + "/Tests/plugins/behave/behave.py")),
                                           attributes: [.posixPermissions: 0o755])
        _ = FileManager.default.createFile(atPath: pdir + "/plugin.json5", contents: Data("""
            { id: "probe", executable: "probe.py", args: ["env"], capability: "probe", commands: [ { name: "probe.echo" } ] }
            """.utf8), attributes: [.posixPermissions: 0o644])
        try spoil(pdir)
        return (root, pdir)
    }

    static func invokeProbe(_ root: String) throws -> (result: JSONValue?, stderr: String) {
        let e = CLIEnv("plugins: { dirs: ['\(root)'], entries: { probe: { enabled: true } } }")
        defer { e.cleanup() }
        var env = e.vars
        env["OPENCLAW_GATEWAY_TOKEN"] = "secret-token-for-the-gateway"
        env["OPENCLAW_GATEWAY_PASSWORD"] = "secret-password"
        let r = try runProcess(TestPaths.nodeBinary, ["invoke", "probe.echo", "--local", "--config", e.config], env: env)
        return (JSONValue.parse(r.stdout), r.stderr)
    }

    @Test func pluginsFromUntrustedPlacesAreRefused() throws {
        guard geteuid() == 0 else { return }  // giving files to another account needs root
        let attacks: [(String, (String) throws -> Void, String)] = [
            ("directory of another account", { chown($0, 65534, 65534) }, "owned by uid 65534"),
            ("directory writable by a group others are in", { chown($0, uid_t.max, 65534); chmod($0, 0o775) }, "writable by its group (gid 65534), which has members other than its owner"),
            ("manifest of another account", { chown($0 + "/plugin.json5", 65534, 65534) }, "owned by uid 65534"),
            ("world-writable manifest", { chmod($0 + "/plugin.json5", 0o666) }, "writable by others (mode 0666)"),
            ("executable of another account", { chown($0 + "/probe.py", 65534, 65534) }, "refused executable"),
            ("world-writable executable", { chmod($0 + "/probe.py", 0o777) }, "refused executable"),
            ("executable outside the directory", { d in
                try FileManager.default.copyItem(atPath: d + "/probe.py", toPath: d + "/../outside.py")
                try Data(#"{ id: "probe", executable: "../outside.py", args: ["env"], capability: "probe", commands: [ { name: "probe.echo" } ] }"#.utf8)
                    .write(to: URL(fileURLWithPath: d + "/plugin.json5"))
            }, "leaves the plugin's directory"),
            ("a symlink out of the directory", { d in
                try FileManager.default.copyItem(atPath: d + "/probe.py", toPath: d + "/../elsewhere.py")
                unlink(d + "/probe.py")
                try FileManager.default.createSymbolicLink(atPath: d + "/probe.py", withDestinationPath: d + "/../elsewhere.py")
            }, "leaves the plugin's directory"),
            ("an interpreter's script of another account", { d in
                try Data(#"{ id: "probe", executable: "/usr/bin/python3", args: ["probe.py", "env"], capability: "probe", commands: [ { name: "probe.echo" } ] }"#.utf8)
                    .write(to: URL(fileURLWithPath: d + "/plugin.json5"))
                chown(d + "/probe.py", 65534, 65534)
            }, "refused script"),
        ]
        // The plugins directory reached through a link that another account planted in /tmp: it
        // could repoint it at any time (after start-up, before a restart), so it is never followed.
        do {
            let (root, _) = try Self.pluginTree { _ in }
            defer { try? FileManager.default.removeItem(atPath: root) }
            let link = "/tmp/ocn-plugins-link-\(UUID().uuidString.prefix(8))"
            try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: root)
            defer { unlink(link) }
            lchown(link, 65534, 65534)
            let (res, stderr) = try Self.invokeProbe(link)
            #expect(res?["code"] == "INVALID_REQUEST", "a link of uid 65534: \(String(describing: res))")
            #expect(stderr.contains("is a symbolic link owned by uid 65534"), "\(stderr)")
            // The same link as the node's own: followed (the operator made it).
            lchown(link, 0, 0)
            let (ok, okErr) = try Self.invokeProbe(link)
            #expect(ok?["mode"] == "env", "\(String(describing: ok)) \(okErr)")
        }
        for (what, spoil, says) in attacks {
            let (root, _) = try Self.pluginTree(spoil)
            defer { try? FileManager.default.removeItem(atPath: root) }
            let (res, stderr) = try Self.invokeProbe(root)
            #expect(res?["code"] == "INVALID_REQUEST", "\(what): the plugin was loaded: \(String(describing: res))")
            #expect(stderr.contains(says), "\(what): \(stderr)")
        }
        // A plugin in a proper directory runs, in its directory, without the node's secrets (8).
        // Group-writable for its owner's private group (root's here; a user's own group under
        // Debian 13's umask 0002) lets nobody else write: that is a proper directory too.
        let (root, pdir) = try Self.pluginTree { d in chmod(d, 0o775); chmod(d + "/plugin.json5", 0o664) }
        defer { try? FileManager.default.removeItem(atPath: root) }
        let (res, stderr) = try Self.invokeProbe(root)
        #expect(res?["mode"] == "env", "\(String(describing: res)) \(stderr)")
        let names = res?["environ"]?.arrayValue?.compactMap(\.stringValue) ?? []
        #expect(!names.isEmpty && !names.contains { $0.hasPrefix("OPENCLAW_GATEWAY") }, "\(names)")
        #expect(res?["cwd"]?.stringValue == PathName.resolvingSymlinks(pdir))
    }

    // MARK: 10. state another account controls is refused

    @Test func stateOwnedBySomeoneElseIsRefused() throws {
        guard geteuid() == 0 else { return }
        let attacks: [(String, (String) -> Void, String)] = [
            ("a state directory of another account, 0777", { s in chown(s, 65534, 65534); chmod(s, 0o777) }, "is owned by uid 65534"),
            ("a group-writable state directory", { s in chmod(s, 0o770) }, "is writable by group or others"),
            ("a state.db of another account, 0666", { s in chown(s + "/state.db", 65534, 65534); chmod(s + "/state.db", 0o666) }, "state.db: it is owned by uid 65534"),
            ("a world-writable state.db", { s in chmod(s + "/state.db", 0o666) }, "state.db: it is writable by group or others"),
            ("a WAL of another account", { s in
                _ = FileManager.default.createFile(atPath: s + "/state.db-wal", contents: Data()); chown(s + "/state.db-wal", 65534, 65534)
            }, "state.db-wal: it is owned by uid 65534"),
            ("a state.db that is a symlink", { s in
                rename(s + "/state.db", s + "/real.db"); symlink(s + "/real.db", s + "/state.db")
            }, "it is not a regular file"),
            ("a state directory under a directory others can write", { s in chmod(PathName.directory(s), 0o777) }, "is writable by others (mode 0777), who could replace it"),
            ("a state directory under a directory a shared group can write", { s in chown(PathName.directory(s), uid_t.max, 65534); chmod(PathName.directory(s), 0o775) },
             "is writable by its group (gid 65534), which has members other than its owner (mode 0775), who could replace it"),
        ]
        for (what, spoil, says) in attacks {
            let e = CLIEnv("")
            defer { e.cleanup() }
            let state = e.dir + "/state"
            #expect(try runProcess(TestPaths.nodeBinary, ["status", "--config", e.config], env: e.vars).code == 0, "a fresh state works")
            spoil(state)
            let run = try runProcess(TestPaths.nodeBinary, ["run", "--config", e.config], env: e.vars, timeout: 20)
            #expect(run.code != 0 && run.stderr.contains("refusing to use") && run.stderr.contains(says), "\(what): \(run.code) \(run.stderr)")
            let status = try runProcess(TestPaths.nodeBinary, ["status", "--config", e.config], env: e.vars)
            #expect(status.code != 0 && status.stderr.contains(says), "\(what): status \(status.stderr)")
            chmod(PathName.directory(state), 0o755)
            chown(PathName.directory(state), uid_t.max, 0)
        }
        // A state directory reached through a link another account planted in /tmp: it could be
        // repointed (to its own directory, socket and all) after the check. Our own link is fine.
        do {
            let e = CLIEnv("")
            defer { e.cleanup() }
            #expect(try runProcess(TestPaths.nodeBinary, ["status", "--config", e.config], env: e.vars).code == 0)
            let link = "/tmp/ocn-state-link-\(UUID().uuidString.prefix(8))"
            try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: e.dir + "/state")
            defer { unlink(link) }
            let config = e.dir + "/linked.json5"
            try "{ node: { stateDir: '\(link)' }, gateway: { discovery: { lan: false } } }".write(toFile: config, atomically: true, encoding: .utf8)
            lchown(link, 65534, 65534)
            let theirs = try runProcess(TestPaths.nodeBinary, ["status", "--config", config], env: e.vars)
            #expect(theirs.code != 0 && theirs.stderr.contains("is a symbolic link owned by uid 65534"), "\(theirs.stderr)")
            lchown(link, 0, 0)
            let ours = try runProcess(TestPaths.nodeBinary, ["status", "--config", config], env: e.vars)
            #expect(ours.code == 0, "our own link: \(ours.stderr)")
        }
        // The legitimate case beside them: a parent group-writable for its owner's private group
        // (what a Debian 13 login's umask 0002 makes) is no way in for anyone else.
        let e = CLIEnv("")
        defer { e.cleanup() }
        #expect(try runProcess(TestPaths.nodeBinary, ["status", "--config", e.config], env: e.vars).code == 0)
        chmod(e.dir, 0o775)
        let status = try runProcess(TestPaths.nodeBinary, ["status", "--config", e.config], env: e.vars)
        #expect(status.code == 0, "a private group's writable parent: \(status.stderr)")
    }

    @Test func aBundlesWritableLibraryIsRefused() throws {
        let t = try BundleLoadingTests.InstallTree(config: "capabilities: { camera: { enabled: true } }"); defer { t.cleanup() }
        chmod(t.lib + "/libopenclaw-media.so", 0o666)
        let why = try #require(try t.reason("camera"))
        #expect(why.contains("the library libopenclaw-media.so beside it is not trustworthy") && why.contains("writable by others (mode 0666)"), "\(why)")
        chmod(t.lib + "/libopenclaw-media.so", 0o755)
        let fine = try t.reason("camera")
        #expect(fine?.contains("not trustworthy") != true, "\(String(describing: fine))")
        if geteuid() == 0 {
            chown(t.lib + "/libopenclaw-x11.so", 65534, 65534)
            #expect((try t.reason("camera"))?.contains("libopenclaw-x11.so beside it is not trustworthy") == true)
        }
    }

    // Also: doctor warns about a config others can read that holds the token.
    @Test func doctorWarnsAboutAReadableConfigWithSecrets() throws {
        let e = CLIEnv("")
        defer { e.cleanup() }
        try Data("{ gateway: { url: 'ws://127.0.0.1:9', token: 'abc' }, node: { stateDir: '\(e.dir)/state' } }".utf8).write(to: URL(fileURLWithPath: e.config))
        chmod(e.config, 0o644)
        let open = try runProcess(TestPaths.nodeBinary, ["doctor", "--config", e.config], env: e.vars).stdout
        #expect(open.contains("holds the gateway's token and is readable by every account (mode 0644): run chmod 600"), "\(open)")
        chmod(e.config, 0o600)
        let closed = try runProcess(TestPaths.nodeBinary, ["doctor", "--config", e.config], env: e.vars).stdout
        #expect(!closed.contains("holds the gateway's token"), "\(closed)")
    }
}
