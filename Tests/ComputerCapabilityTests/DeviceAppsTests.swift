@testable import ComputerCapability
import Foundation
@testable import Kit
@testable import Support
@testable import TestSupport
import Testing

/// A temporary XDG tree: the user's data directory and one system data directory.
final class XDGTree {
    let root = TestPaths.tempDir("xdg")
    var user: String { root + "/home/.local/share/applications" }
    var sys: String { root + "/usr/share/applications" }
    var env: [String: String] {
        ["XDG_DATA_HOME": root + "/home/.local/share", "XDG_DATA_DIRS": root + "/usr/share", "HOME": root + "/home", "PATH": "/usr/bin:/bin"]
    }

    init() throws {
        for d in [user, sys] { try FileManager.default.createDirectory(atPath: d, withIntermediateDirectories: true) }
    }

    func write(_ dir: String, _ name: String, _ body: String) {
        _ = FileManager.default.createFile(atPath: dir + "/" + name, contents: Data(body.utf8))
    }

    static func entry(_ exec: String, _ name: String = "App", _ extra: String = "") -> String {
        "[Desktop Entry]\nType=Application\nName=\(name)\nExec=\(exec)\n\(extra)"
    }

    func remove() { try? FileManager.default.removeItem(atPath: root) }
}

/// device.apps over a temporary XDG tree, by upstream's Linux inventory rules: one row per rule
/// that admits or refuses an entry, the masking, the revision and the exact lookup.
struct DeviceAppsTests {
    @Test func theInventoryFollowsUpstreamsRules() throws {
        let t = try XDGTree(); defer { t.remove() }
        let truePath = PathName.resolvingSymlinks(try #require(Subprocess.findExecutable("true")))
        t.write(t.sys, "editor.desktop", XDGTree.entry("true", "Text Editor", "Name[de]=Texteditor\n"))
        t.write(t.sys, "quoted.desktop", XDGTree.entry("\"\(truePath)\"", "Quoted", "NoDisplay=false\nTerminal=false\n"))
        t.write(t.user, "mine.desktop", XDGTree.entry("true", "My\\sTool"))
        // Refused, each for one rule.
        let refused: [(file: String, body: String)] = [
            ("action.desktop", XDGTree.entry("true", "Action", "[Desktop Action x]\nName=x\n")),
            ("dup.desktop", XDGTree.entry("true", "Dup", "Name=Again\n")),
            ("hidden.desktop", XDGTree.entry("true", "Hidden", "NoDisplay=true\n")),
            ("terminal.desktop", XDGTree.entry("true", "Terminal", "Terminal=true\n")),
            ("dbus.desktop", XDGTree.entry("true", "DBus", "DBusActivatable=yes\n")),
            ("tryexec.desktop", XDGTree.entry("true", "TryExec", "TryExec=true\n")),
            ("path.desktop", XDGTree.entry("true", "Path", "Path=/tmp\n")),
            ("onlyshowin.desktop", XDGTree.entry("true", "Only", "OnlyShowIn=GNOME;\n")),
            ("args.desktop", XDGTree.entry("true %F", "Args")),
            ("escape.desktop", XDGTree.entry("true", "Bad\\xEscape")),
            ("link.desktop", "[Desktop Entry]\nType=Link\nName=A Link\nURL=https://example.invalid\n"),
            ("noequals.desktop", XDGTree.entry("true", "NoEquals", "=value\n")),
            ("not a name.desktop", XDGTree.entry("true", "Spaces")),
            ("script.desktop", XDGTree.entry(t.root + "/tool.sh", "Script")),
            ("big.desktop", XDGTree.entry("true", "Big", "X-Pad=" + String(repeating: "x", count: 70_000) + "\n")),
        ]
        for r in refused { t.write(t.sys, r.file, r.body) }
        _ = FileManager.default.createFile(atPath: t.root + "/tool.sh", contents: Data("#!/bin/sh\n".utf8), attributes: [.posixPermissions: 0o755])
        try FileManager.default.createDirectory(atPath: t.sys + "/sub", withIntermediateDirectories: true)
        t.write(t.sys + "/sub", "deep.desktop", XDGTree.entry("true", "Deep"))
        try FileManager.default.createSymbolicLink(atPath: t.sys + "/symlink.desktop", withDestinationPath: t.sys + "/editor.desktop")
        // The first root that holds a name owns it, even with an entry that is not shown.
        t.write(t.sys, "masked.desktop", XDGTree.entry("true", "Masked"))
        t.write(t.user, "masked.desktop", XDGTree.entry("true", "Masked", "Hidden=true\n"))

        let inventory = DesktopEntries.load(t.env, locale: "de_DE.UTF-8")
        #expect(inventory.complete)
        #expect(inventory.entries.map(\.label) == ["My Tool", "Quoted", "Texteditor"], "\(inventory.entries.map(\.label))")
        let editor = try #require(inventory.entries.first { $0.label == "Texteditor" })
        #expect(editor.appId == "linux-desktop:editor.desktop" && editor.system && editor.executable == truePath)
        #expect(editor.appRevision.count == 64 && editor.appRevision.allSatisfy { "0123456789abcdef".contains($0) })
        #expect(inventory.entries.first { $0.label == "My Tool" }?.system == false)
        #expect(DesktopEntries.load(t.env, locale: "C").entries.contains { $0.label == "Text Editor" })

        // The listing's rows are upstream's shape; includeSystem: false keeps the user's own.
        let listed = ComputerCapability.apps(DeviceAppsParams(), env: t.env)
        #expect(listed.count == 3 && listed.totalMatched == 3 && !listed.truncated && listed.inventoryComplete, "\(listed)")
        let row = try #require(try JSONValueEncoder.encode(listed)["apps"]?.arrayValue?.first { $0["label"] == "Quoted" })
        #expect(row.objectValue.map { Set($0.keys) } == ["appId", "appRevision", "label", "path", "system"], "\(row)")
        #expect(ComputerCapability.apps(DeviceAppsParams(includeSystem: false), env: t.env).apps.map(\.label) == ["My Tool"])
        let limited = ComputerCapability.apps(DeviceAppsParams(limit: 2), env: t.env)
        #expect(limited.count == 2 && limited.totalMatched == 3 && limited.truncated)
        #expect(ComputerCapability.apps(DeviceAppsParams(query: "TOOL"), env: t.env).apps.map(\.label) == ["My Tool"])

        // The exact lookup: one row with the program's real path, or none.
        let exact = ComputerCapability.apps(DeviceAppsParams(appId: "linux-desktop:quoted.desktop"), env: t.env)
        #expect(exact.count == 1 && exact.apps.first?.executable == truePath, "\(exact)")
        let none = ComputerCapability.apps(DeviceAppsParams(appId: "linux-desktop:masked.desktop"), env: t.env)
        #expect(none.count == 0 && none.totalMatched == 0 && none.apps.isEmpty)
    }

    @Test func theRevisionChangesWithTheEntryOrTheProgram() throws {
        let t = try XDGTree(); defer { t.remove() }
        let prog = t.root + "/prog"
        try FileManager.default.copyItem(atPath: try #require(Subprocess.findExecutable("true")), toPath: prog)
        t.write(t.sys, "app.desktop", XDGTree.entry(prog))
        func revision() -> String? { DesktopEntries.load(t.env, locale: nil).entries.first?.appRevision }
        let first = try #require(revision())
        #expect(revision() == first, "stable while nothing changes")
        t.write(t.sys, "app.desktop", XDGTree.entry(prog, "App", "Comment=changed\n"))
        let second = try #require(revision())
        #expect(second != first)
        // The same program replaced by another file (a new inode).
        try FileManager.default.removeItem(atPath: prog)
        try FileManager.default.copyItem(atPath: try #require(Subprocess.findExecutable("false")), toPath: prog)
        #expect(try #require(revision()) != second)
    }

    @Test func aBudgetOf2048DirectoryEntriesMarksTheInventoryIncomplete() throws {
        let t = try XDGTree(); defer { t.remove() }
        for i in 0..<2050 { t.write(t.user, "a\(i).txt", "") }
        t.write(t.sys, "late.desktop", XDGTree.entry("true", "Late"))
        let inventory = DesktopEntries.load(t.env, locale: nil)
        #expect(!inventory.complete && inventory.entries.isEmpty)
        #expect(!ComputerCapability.apps(DeviceAppsParams(), env: t.env).inventoryComplete)
    }
}

/// device.apps.launch: the revision the caller authorized, the plan's one program, the
/// ready → allow handshake with the gateway (played here on the Kit's DuplexChannel, the object the
/// gateway connection drives), and programs refused beyond upstream (interpreters, replaceable).
struct DeviceAppsLaunchTests {
    /// A gateway end for one invoke: records what the node streams, answers the ready with `answer`.
    final class GatewayEnd: @unchecked Sendable {
        let chunks = Locked<[String]>([])
        var channel: DuplexChannel!
        init(answer: String?, after delay: Duration = .zero) {
            channel = DuplexChannel { [unowned self] text in
                self.chunks.withLock { $0.append(text) }
                if let answer, text.contains("installed-app-launch.ready") {
                    let c = self.channel!
                    Task { try? await Task.sleep(for: delay); _ = c.deliver(seq: 0, payload: answer) }
                }
                return .accepted
            }
        }
    }

    /// A clock whose waits end at once: the 10 s permit wait, without waiting 10 s.
    struct ImpatientClock: NodeClock {
        var now: ContinuousClock.Instant { SystemClock().now }
        var wallMilliseconds: Int64 { SystemClock().wallMilliseconds }
        func sleep(for duration: Duration) async throws { try await Task.sleep(for: .milliseconds(50)) }
    }

    func launch(_ p: DeviceAppsLaunchParams, _ env: [String: String], _ end: GatewayEnd? = nil,
                clock: any NodeClock = SystemClock()) async throws(NodeError) -> DeviceAppsLaunchResult {
        try await AppLauncher.launch(p.validated(), env: env, duplex: end?.channel ?? .detached(), clock: clock)
    }

    func message(_ body: () async throws -> Void) async -> String? {
        do { try await body(); return nil } catch let e as NodeError {
            #expect(e.code == AppLauncher.launchFailed || e.code == .invalidRequest, "\(e)")
            return e.message
        } catch { return "\(error)" }
    }

    @Test func launchesTheAuthorizedRevisionAfterTheGatewaysAllow() async throws {
        let t = try XDGTree(); defer { t.remove() }
        let truePath = PathName.resolvingSymlinks(try #require(Subprocess.findExecutable("true")))
        t.write(t.sys, "real.desktop", XDGTree.entry(truePath, "Real"))
        let row = try #require(DesktopEntries.load(t.env, locale: nil).entries.first)
        var p = DeviceAppsLaunchParams(appId: row.appId, appRevision: row.appRevision)
        p.execution = .init(command: [truePath])

        // Over a gateway: ready first (exactly upstream's closed object), spawn after the allow.
        let end = GatewayEnd(answer: #"{"type":"installed-app-launch.allow","validForMs":5000}"#)
        let started = try await launch(p, t.env, end)
        let firstChunk = try #require(end.chunks.withLock { $0.first })
        let ready = try #require(JSONValue.parse(firstChunk))
        #expect(ready == ["type": "installed-app-launch.ready", "appId": .string(row.appId), "appRevision": .string(row.appRevision)])
        #expect(try JSONValueEncoder.encode(started) == ["status": "process-started", "appId": .string(row.appId),
                                                        "appRevision": .string(row.appRevision), "pid": .number(Double(started.pid)),
                                                        "success": true])
        #expect(waitUntil(timeout: 5) { kill(started.pid, 0) != 0 }, "reaped after it ended")
        // Locally (no gateway): nobody to ask, it starts.
        #expect(try await launch(p, t.env).pid > 0)

        // Denied, never answered, an allow out of range, a stale revision, another program.
        let deny = GatewayEnd(answer: #"{"type":"installed-app-launch.deny"}"#)
        #expect(await message { _ = try await launch(p, t.env, deny) } == "Installed-app authorization is no longer current")
        let silent = GatewayEnd(answer: nil)
        #expect(await message { _ = try await launch(p, t.env, silent, clock: ImpatientClock()) } == "Installed-app authorization timed out")
        let tooLong = GatewayEnd(answer: #"{"type":"installed-app-launch.allow","validForMs":60000}"#)
        #expect(await message { _ = try await launch(p, t.env, tooLong) } == "Installed-app authorization is no longer current")
        let late = GatewayEnd(answer: #"{"type":"installed-app-launch.allow","validForMs":1}"#, after: .milliseconds(200))
        #expect(await message { _ = try await launch(p, t.env, late) } == "Installed-app authorization expired before spawn")
        var stale = p
        stale.appRevision = String(repeating: "0", count: 64)
        #expect(await message { _ = try await launch(stale, t.env) }?.hasPrefix("INSTALLED_APP_CHANGED: refresh device.apps") == true)
        var other = p
        other.execution = .init(command: ["/bin/sh"])
        #expect(await message { _ = try await launch(other, t.env) } == "INSTALLED_APP_CHANGED: execution plan does not match the exact app")
        var twoArgs = p
        twoArgs.execution = .init(command: [truePath, "--version"])
        #expect(await message { _ = try await launch(twoArgs, t.env) }?.contains("exactly one program") == true)
        var unbound = p
        unbound.execution = .init(command: [truePath], systemRunPlan: ["installedApp": ["appId": "linux-desktop:other.desktop", "appRevision": "x"]])
        #expect(await message { _ = try await launch(unbound, t.env) } == "INSTALLED_APP_CHANGED: approval plan does not bind this app revision")
        var planWithoutApp = p
        planWithoutApp.execution = .init(command: [truePath], systemRunPlan: ["argv": [.string(truePath)]])
        #expect(await message { _ = try await launch(planWithoutApp, t.env) } == "INSTALLED_APP_CHANGED: approval plan does not bind this app revision")
        var bound = p
        bound.execution = .init(command: [truePath], systemRunPlan: ["installedApp": ["appId": .string(row.appId), "appRevision": .string(row.appRevision)]])
        #expect(try await launch(bound, t.env).pid > 0)
        #expect(await message { _ = try await launch(DeviceAppsLaunchParams(appId: "linux-desktop:nope.desktop"), t.env) }?
            .hasPrefix("INSTALLED_APP_CHANGED") == true)
    }

    /// Beyond upstream: an ELF interpreter, or a program another account could replace, is listed
    /// (upstream's rules admit it) but never launched; the user's entry never takes a root-owned
    /// system entry's name (checked against the real /usr/share/applications, which root owns).
    @Test func interpretersAndReplaceableProgramsAreNotLaunched() async throws {
        let t = try XDGTree(); defer { t.remove() }
        // Debian's python3 (an ELF program; a pyenv shim on PATH would be a script, refused earlier).
        let python = PathName.resolvingSymlinks("/usr/bin/python3")
        t.write(t.sys, "python.desktop", XDGTree.entry(python, "Python"))
        let theirs = t.root + "/theirs"
        try FileManager.default.createDirectory(atPath: theirs, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: try #require(Subprocess.findExecutable("true")), toPath: theirs + "/prog")
        chown(theirs + "/prog", 65534, 65534)
        t.write(t.sys, "theirs.desktop", XDGTree.entry(theirs + "/prog", "Theirs"))
        // A copy of bash under an innocent name, in a directory of the node's account: a shell all the same.
        let renamed = t.root + "/mine"
        try FileManager.default.createDirectory(atPath: renamed, withIntermediateDirectories: true)
        chmod(renamed, 0o755)
        try FileManager.default.copyItem(atPath: PathName.resolvingSymlinks("/usr/bin/bash"), toPath: renamed + "/image-viewer")
        t.write(t.sys, "viewer.desktop", XDGTree.entry(renamed + "/image-viewer", "Viewer"))
        // And a hard link to dash (no copy: the same file).
        if link(PathName.resolvingSymlinks("/usr/bin/dash"), renamed + "/notes") == 0 {
            t.write(t.sys, "notes.desktop", XDGTree.entry(renamed + "/notes", "Notes"))
        }
        let rows = DesktopEntries.load(t.env, locale: nil).entries
        var cases = [("linux-desktop:python.desktop", "a shell or interpreter"), ("linux-desktop:theirs.desktop", "owned by uid 65534"),
                     ("linux-desktop:viewer.desktop", "under another name")]
        if rows.contains(where: { $0.appId == "linux-desktop:notes.desktop" }) { cases.append(("linux-desktop:notes.desktop", "under another name")) }
        for (id, says) in cases {
            let row = try #require(rows.first { $0.appId == id }, "\(rows)")
            let m = await message { _ = try await launch(DeviceAppsLaunchParams(appId: id, appRevision: row.appRevision), t.env) }
            #expect(m?.contains(says) == true, "\(id): \(m ?? "launched")")
        }
        // A planted user entry named like a root-owned one (scripts/setup installs chromium's).
        let system = "/usr/share/applications/chromium.desktop"
        if FileManager.default.fileExists(atPath: system) {
            t.write(t.user, "chromium.desktop", XDGTree.entry("true", "Planted"))
            var env = t.env
            env["XDG_DATA_DIRS"] = "/usr/share"
            let listed = DesktopEntries.load(env, locale: nil).entries
            #expect(!listed.contains { $0.label == "Planted" }, "\(listed)")
        }
        #expect(DesktopEntries.singleToken("\"/opt/My App/bin/app\"") == "/opt/My App/bin/app")
        #expect(DesktopEntries.singleToken("true --version") == nil && DesktopEntries.singleToken("$(id)") == nil)
        #expect(AppLauncher.baseName("/usr/bin/python3.11") == "python")
    }
}

/// The launch handshake on the wire: the real daemon with the computer bundle on an Xvfb display,
/// the test gateway (which checks each progress frame against the 2026.8 schema) playing the
/// gateway's side — it reads the ready chunk and answers allow or deny through node.invoke.input.
@Suite(.serialized) struct DeviceAppsLaunchWireTests {
    @Test func theGatewaysAllowStartsTheAppAndItsDenyRefusesIt() throws {
        let t = try XDGTree(); defer { t.remove() }
        let prog = t.root + "/sleeper"
        // A native program that stays up until the test ends it: a copy of sleep would need an
        // argument, so the app is `yes`, its output on /dev/null.
        try FileManager.default.copyItem(atPath: try #require(Subprocess.findExecutable("yes")), toPath: prog)
        t.write(t.user, "sleeper.desktop", XDGTree.entry(prog, "Sleeper"))
        let x = try Xvfb(screens: ["640x480x24"]); defer { x.stop() }
        let gw = try TestGateway(stateFile: TestPaths.tempDir("gw") + "/gw.json", args: ["--auto-approve"]); defer { gw.stop() }
        let node = NodeUnderTest(gatewayURL: gw.url, extra: "capabilities: { computer: { enabled: true, display: '\(x.display)' } }")
        for (k, v) in t.env where k != "PATH" { node.extraEnv[k] = v }
        try node.start(); defer { node.cleanup() }
        guard gw.waitFor("hello") != nil else { throw TestFailure("no hello: \(node.log)") }

        let listed = try #require(gw.invoke("device.apps", paramsJSON: #"{"appId":"linux-desktop:sleeper.desktop"}"#, timeoutMs: 10_000))
        let app = try #require(listed["payload"]?["apps"]?.arrayValue?.first, "\(listed) \(node.log.suffix(2000))")
        #expect(app["executable"]?.stringValue == PathName.resolvingSymlinks(prog))
        let revision = try #require(app["appRevision"]?.stringValue)

        for (id, answer, expectStarted) in [("allow-1", #"{"type":"installed-app-launch.allow","validForMs":5000}"#, true),
                                            ("deny-1", #"{"type":"installed-app-launch.deny"}"#, false)] {
            let params: JSONValue = ["appId": "linux-desktop:sleeper.desktop", "appRevision": .string(revision), "agentId": "main",
                                     "execution": ["command": [.string(PathName.resolvingSymlinks(prog))]]]
            gw.command(["cmd": "invoke", "id": .string(id), "command": "device.apps.launch", "paramsJSON": .string(params.jsonString()),
                        "timeoutMs": 30_000])
            let ready = try #require(gw.waitFor("progress") { $0["id"]?.stringValue == id && $0["chunk"] != "" }, "\(node.log.suffix(2000))")
            let readyText = try #require(ready["chunk"]?.stringValue)
            #expect(JSONValue.parse(readyText) == ["type": "installed-app-launch.ready", "appId": "linux-desktop:sleeper.desktop",
                                                   "appRevision": .string(revision)])
            gw.command(["cmd": "input", "id": .string(id), "seq": 0, "payloadJSON": .string(answer)])
            let result = try #require(gw.waitFor("invoke_result", timeout: 30) { $0["id"]?.stringValue == id }, "\(node.log.suffix(2000))")
            if expectStarted {
                let pid = try #require(result["payload"]?["pid"]?.intValue, "\(result)")
                #expect(result["payload"]?["status"] == "process-started" && result["payload"]?["appRevision"]?.stringValue == revision)
                #expect(kill(Int32(pid), 0) == 0, "the app runs")
                kill(-Int32(pid), SIGTERM)  // its own process group
                #expect(waitUntil(timeout: 5) { kill(Int32(pid), 0) != 0 }, "the app was reaped")
            } else {
                #expect(result["ok"] == false && result["error"]?["code"] == "INSTALLED_APP_LAUNCH_FAILED", "\(result)")
                #expect(result["error"]?["message"] == "Installed-app authorization is no longer current", "\(result)")
            }
        }
    }
}
