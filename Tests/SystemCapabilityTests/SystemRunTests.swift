@testable import Config
import Foundation
@testable import Kit
@testable import Support
@testable import SystemCapability
@testable import TestSupport
import Testing

/// system.run, system.which and the exec approvals, through the real daemon and the test gateway
/// (which checks every frame against the upstream schema).
@Suite(.serialized) struct SystemRunTests {
    /// A paired daemon with the system capability on, and its gateway.
    final class Rig: @unchecked Sendable {
        let gw: TestGateway
        let node: NodeUnderTest
        let work: String

        init(system: String = "") throws {
            gw = try TestGateway(stateFile: TestPaths.tempDir("gw") + "/gw.json", args: ["--auto-approve"])
            node = NodeUnderTest(gatewayURL: gw.url, extra: "capabilities: { system: { enabled: true, \(system) } }")
            work = node.dir + "/work"
            try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
            try node.start()
            guard gw.waitFor("hello") != nil else { throw TestFailure("no hello: \(node.log)") }
        }

        /// system.run with these params; the invoke result frame.
        func run(_ params: JSONValue, wait: TimeInterval = 30) throws -> JSONValue {
            try #require(gw.invoke("system.run", paramsJSON: params.jsonString(), timeoutMs: 60_000, wait: wait), "\(node.log)")
        }

        func call(_ command: String, _ params: JSONValue = [:]) throws -> JSONValue {
            try #require(gw.invoke(command, paramsJSON: params.jsonString()), "\(node.log)")
        }

        func stop() { node.cleanup(); gw.stop() }
    }

    static func argv(_ words: String...) -> JSONValue { .array(words.map { .string($0) }) }

    @Test func runsACommandAndReportsItAsUpstreamDoes() throws {
        let r = try Rig(); defer { r.stop() }
        let hello = try #require(r.gw.all("connect").last)
        for c in SystemCommand.allCases { #expect(hello["commands"]?.arrayValue?.contains(.string(c.rawValue)) == true, "\(c)") }
        let res = try r.run(["command": Self.argv("/bin/sh", "-lc", "echo out; echo err >&2; exit 3"), "runId": "run-1", "sessionKey": "s1"])
        #expect(res["ok"] == true, "\(res)")
        let p = try #require(res["payload"])
        #expect(p["exitCode"] == 3 && p["stdout"] == "out\n" && p["stderr"] == "err\n", "\(p)")
        #expect(p["success"] == false && p["timedOut"] == false && p["error"] == .null && p["truncated"] == false)
        let fin = try #require(r.gw.waitFor("node_event") { $0["name"] == "exec.finished" }, "\(r.node.log)")
        let e = try #require(fin["payload"])
        #expect(e["runId"] == "run-1" && e["sessionKey"] == "s1" && e["host"] == "node" && e["exitCode"] == 3, "\(e)")
        #expect(e["command"] == "echo out; echo err >&2; exit 3" && e["output"] == "out\n\nerr", "stdout, stderr and error joined by newlines, trimmed")
        let ok = try r.run(["command": Self.argv("true")])
        #expect(ok["payload"]?["success"] == true && ok["payload"]?["exitCode"] == 0)
        let fin2 = try #require(r.gw.waitFor("node_event") { $0["name"] == "exec.finished" })
        #expect(fin2["payload"]?["sessionKey"] == "node", "the fallback session")
        #expect(r.gw.schemaErrors.isEmpty, "\(r.gw.schemaErrors)")
    }

    @Test func outputIsCappedAtExactly200000BytesAndInvalidUTF8Survives() throws {
        let r = try Rig(); defer { r.stop() }
        let big = try r.run(["command": Self.argv("/bin/sh", "-c", "head -c 300000 /dev/zero | tr '\\0' a")])
        let out = try #require(big["payload"]?["stdout"]?.stringValue)
        #expect(out == String(repeating: "a", count: 200_000) + "\n... (truncated)")
        #expect(big["payload"]?["truncated"] == true)
        // Both streams count against one cap; the suffix goes to stderr when it has text.
        let both = try r.run(["command": Self.argv("/bin/sh", "-c", "head -c 150000 /dev/zero >&2; head -c 100000 /dev/zero")])
        let so = both["payload"]?["stdout"]?.stringValue ?? "", se = both["payload"]?["stderr"]?.stringValue ?? ""
        #expect(so.utf8.count + se.utf8.count == 200_000 + "\n... (truncated)".utf8.count, "\(so.utf8.count) + \(se.utf8.count)")
        #expect(se.hasSuffix("\n... (truncated)"))
        let bytes = try r.run(["command": Self.argv("printf", "\\377\\376ok")])
        #expect(bytes["payload"]?["stdout"] == "\u{FFFD}\u{FFFD}ok", "\(bytes)")
    }

    @Test func timeoutKillsTheWholeProcessGroup() throws {
        let r = try Rig(); defer { r.stop() }
        let pidFile = r.work + "/grandchild.pid"
        let started = Date()
        let res = try r.run(["command": Self.argv("/bin/sh", "-c", "sleep 60 & echo $! > \(pidFile); sleep 60"), "timeoutMs": 700])
        #expect(Date().timeIntervalSince(started) < 10)
        let p = try #require(res["payload"])
        #expect(p["timedOut"] == true && p["success"] == false && p["exitCode"] == nil, "\(p)")
        let pid = try #require(Int32((try String(contentsOfFile: pidFile, encoding: .utf8)).trimmed()))
        #expect(waitUntil(timeout: 5) { kill(pid, 0) != 0 }, "grandchild \(pid) survived the timeout")
    }

    @Test func gatewayCancelKillsTheCommand() throws {
        let r = try Rig(); defer { r.stop() }
        let pidFile = r.work + "/child.pid"
        r.gw.command(["cmd": "invoke", "id": "long-1", "command": "system.run", "timeoutMs": 60_000,
                      "paramsJSON": .string((["command": Self.argv("/bin/sh", "-c", "echo $$ > \(pidFile); exec sleep 60")] as JSONValue).jsonString())])
        #expect(waitUntil(timeout: 10) { FileManager.default.fileExists(atPath: pidFile) && ((try? String(contentsOfFile: pidFile, encoding: .utf8)) ?? "").hasSuffix("\n") })
        let pid = try #require(Int32((try String(contentsOfFile: pidFile, encoding: .utf8)).trimmed()))
        r.gw.command(["cmd": "cancel", "id": "long-1"])
        #expect(waitUntil(timeout: 5) { kill(pid, 0) != 0 }, "command \(pid) survived the cancel")
        #expect(waitUntil(timeout: 5) { r.node.log.contains("finished in") && r.node.log.contains("cancelled") }, "\(r.node.log)")
    }

    /// Starts `exec sleep 60` through the gateway and returns its pid once it runs.
    private func startLongCommand(_ r: Rig, id: String) throws -> Int32 {
        let pidFile = r.work + "/\(id).pid"
        r.gw.command(["cmd": "invoke", "id": .string(id), "command": "system.run", "timeoutMs": 60_000,
                      "paramsJSON": .string((["command": Self.argv("/bin/sh", "-c", "echo $$ > \(pidFile); exec sleep 60")] as JSONValue).jsonString())])
        #expect(waitUntil(timeout: 10) { ((try? String(contentsOfFile: pidFile, encoding: .utf8)) ?? "").hasSuffix("\n") }, "\(r.node.log)")
        return try #require(Int32((try String(contentsOfFile: pidFile, encoding: .utf8)).trimmed()))
    }

    /// SIGTERM while a command runs: the invoke is cancelled, its job's CancelFlag kills the
    /// command's tree, and the daemon exits cleanly at once instead of waiting out the command.
    @Test func sigtermEndsARunningCommandAndTheDaemonPromptly() throws {
        let r = try Rig(); defer { r.stop() }
        let pid = try startLongCommand(r, id: "term-1")
        let daemon = try #require(r.node.process)
        let sent = Date()
        kill(daemon.pid, SIGTERM)
        #expect(daemon.child.waitForExit(within: .seconds(10)), "the daemon did not stop within 10 s: \(r.node.log.suffix(2000))")
        #expect(Date().timeIntervalSince(sent) < 10)
        #expect(daemon.child.wait() == 0, "\(r.node.log.suffix(2000))")
        #expect(waitUntil(timeout: 5) { kill(pid, 0) != 0 }, "command \(pid) survived the daemon's SIGTERM")
        #expect(r.node.log.contains("received SIGTERM; stopping") && r.node.log.contains("stopped"), "\(r.node.log.suffix(2000))")
        // Cancelled by the daemon (not only killed by the helper's parent-death signal on exit).
        #expect(r.node.log.contains("[term-1] failed: CANCELLED: the node is stopping"), "\(r.node.log.suffix(2000))")
    }

    /// The gateway connection drops while a command runs: nobody can receive its answer, so it is
    /// cancelled (the command is killed) rather than left running until its own timeout.
    @Test func aLostGatewayConnectionEndsARunningCommand() throws {
        let r = try Rig(); defer { r.stop() }
        let pid = try startLongCommand(r, id: "drop-1")
        r.gw.command(["cmd": "close", "code": 1011])
        #expect(waitUntil(timeout: 10) { kill(pid, 0) != 0 }, "command \(pid) survived the lost connection: \(r.node.log.suffix(2000))")
        #expect(waitUntil(timeout: 5) { r.node.log.contains("invoke(s) running; cancelling them") }, "\(r.node.log.suffix(2000))")
        #expect(waitUntil(timeout: 5) { r.node.log.contains("[drop-1] failed: CANCELLED: its caller went away (the gateway connection ended") },
                "\(r.node.log.suffix(2000))")
        // The node reconnects and serves again.
        #expect(waitUntil(timeout: 20) { r.gw.all("hello").count >= 2 }, "\(r.node.log.suffix(2000))")
        let ok = try r.run(["command": Self.argv("true")])
        #expect(ok["payload"]?["success"] == true, "\(ok)")
    }

    @Test func workingDirectoryAndEnvironment() throws {
        let r = try Rig(); defer { r.stop() }
        let pwd = try r.run(["command": Self.argv("pwd"), "cwd": .string(r.work)])
        #expect(pwd["payload"]?["stdout"] == .string(r.work + "\n"))
        let missing = try r.run(["command": Self.argv("pwd"), "cwd": .string(r.work + "/nope")])
        #expect(missing["payload"]?["success"] == false)
        #expect(missing["payload"]?["error"]?.stringValue?.contains("No such file") == true, "\(missing)")
        // PATH overrides are ignored; the daemon's OPENCLAW_* (its gateway credentials) never reach commands.
        let env = try r.run(["command": Self.argv("env"), "env": ["PATH": "/nowhere", "LANG": "C.UTF-8"]])
        let text = env["payload"]?["stdout"]?.stringValue ?? ""
        #expect(text.contains("LANG=C.UTF-8") && !text.contains("PATH=/nowhere") && !text.contains("OPENCLAW_"), "\(text)")
        // Keys outside the allowlist (terminal, locale, envAllow) are refused by name, as upstream words it.
        let blocked = try r.run(["command": Self.argv("true"), "env": ["LD_PRELOAD": "/tmp/x.so", "GIT_SSH": "x", "BAD KEY": "1", "MY_FLAG": "1"]])
        #expect(blocked["ok"] == false && blocked["error"]?["code"] == "UNAVAILABLE")
        #expect(blocked["error"]?["message"] == "SYSTEM_RUN_DENIED: environment override rejected (blocked override keys: GIT_SSH, LD_PRELOAD, MY_FLAG; invalid non-portable override keys: BAD KEY)",
                "\(blocked)")
        let wrapped = try r.run(["command": Self.argv("/bin/sh", "-lc", "env"), "env": ["LANG": "C.UTF-8", "TERM": "dumb"]])
        let wt = wrapped["payload"]?["stdout"]?.stringValue ?? ""
        #expect(wt.contains("LANG=C.UTF-8") && wt.contains("TERM=dumb"), "\(wt)")
        let which = try r.call("system.which", ["bins": ["sh", "no-such-binary-here", "/bin/sh"]])
        #expect(which["payload"] == ["bins": ["sh": .string(Subprocess.findExecutable("sh") ?? "?")]], "\(which)")
        let noBins = try r.call("system.which")
        #expect(noBins["error"]?["message"]?.stringValue?.contains("bins required") == true)
        let noCommand = try r.run([:])
        #expect(noCommand["error"]?["code"] == "INVALID_REQUEST" && noCommand["error"]?["message"]?.stringValue?.contains("command required") == true)
    }

    /// SHA-256 of the stored document's text, read straight from the SQLite file by Python.
    static func storedHash(_ node: NodeUnderTest) throws -> String {
        let script = """
            import hashlib, sqlite3, sys
            row = sqlite3.connect(sys.argv[1]).execute("SELECT body FROM capability_documents WHERE capability='system' AND name='exec-approvals'").fetchone()
            print(hashlib.sha256(row[0].encode()).hexdigest())
            """
        let r = try runProcess("/usr/bin/python3", ["-c", script, node.dir + "/state/state.db"])
        #expect(r.code == 0, "\(r.stderr)")
        return r.stdout.trimmed()
    }

    @Test func approvalsGetSetWithHashConflictsAndTheyOutliveKill9() throws {
        let r = try Rig(); defer { r.stop() }
        let empty = try r.call("system.execApprovals.get")
        #expect(empty["payload"]?["exists"] == false, "\(empty)")
        #expect(empty["payload"]?["hash"] == "missing:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        let file: JSONValue = ["version": 1, "socket": ["path": "/run/x.sock", "token": "secret"],
                               "defaults": ["security": "allowlist", "ask": "off"],
                               "agents": ["main": ["allowlist": [["pattern": "/usr/bin/echo"]]]]]
        let set = try r.call("system.execApprovals.set", ["file": file])
        #expect(set["ok"] == true, "\(set)")
        let hash = try #require(set["payload"]?["hash"]?.stringValue)
        #expect(try Self.storedHash(r.node) == hash, "the hash is SHA-256 of the stored text")
        #expect(set["payload"]?["file"]?["socket"] == ["path": "/run/x.sock"], "the token is never shown")
        #expect(set["payload"]?["file"]?["agents"]?["main"]?["allowlist"]?.arrayValue?.first?["id"]?.stringValue?.isEmpty == false)
        let noBase = try r.call("system.execApprovals.set", ["file": file])
        #expect(noBase["error"]?["message"] == "INVALID_REQUEST: exec approvals base hash required; reload and retry", "\(noBase)")
        let stale = try r.call("system.execApprovals.set", ["file": file, "baseHash": "0123"])
        #expect(stale["error"]?["message"] == "INVALID_REQUEST: exec approvals changed; reload and retry", "\(stale)")
        let bad = try r.call("system.execApprovals.set", ["file": ["defaults": ["security": "sometimes"]], "baseHash": .string(hash)])
        #expect(bad["error"]?["message"]?.stringValue?.contains("file.defaults.security") == true, "\(bad)")
        // kill -9 and restart: the document and its hash are still there.
        kill(r.node.process!.pid, SIGKILL)
        r.node.stop()
        try r.node.start()
        #expect(r.gw.waitFor("hello") != nil)
        let after = try r.call("system.execApprovals.get")
        #expect(after["payload"]?["hash"] == .string(hash) && after["payload"]?["exists"] == true, "\(after)")
        #expect(after["payload"]?["file"]?["defaults"]?["security"] == "allowlist")
    }

    @Test func policyDecisionsAndTheirUpstreamMessages() throws {
        let r = try Rig(system: "denylist: ['/usr/bin/rm']"); defer { r.stop() }
        func setPolicy(_ defaults: JSONValue, allowlist: [JSONValue]) throws {
            let base = try r.call("system.execApprovals.get")["payload"]?["hash"]?.stringValue
            let res = try r.call("system.execApprovals.set", ["file": ["version": 1, "defaults": defaults,
                                                                       "agents": ["main": ["allowlist": .array(allowlist)]]],
                                                              "baseHash": .string(base ?? "")])
            #expect(res["ok"] == true, "\(res)")
        }
        func denial(_ params: JSONValue) throws -> (message: String?, reason: String?) {
            let res = try r.run(params)
            guard res["ok"] == false else { return (nil, nil) }
            let ev = r.gw.waitFor("node_event", timeout: 5) { $0["name"] == "exec.denied" }
            return (res["error"]?["message"]?.stringValue, ev?["payload"]?["reason"]?.stringValue)
        }
        try setPolicy(["security": "allowlist"], allowlist: [["pattern": "/usr/bin/echo"], ["pattern": "tr", "argPattern": "^a b$"]])
        #expect(try r.run(["command": Self.argv("echo", "hi")])["payload"]?["stdout"] == "hi\n")
        #expect(try denial(["command": Self.argv("ls")]) == ("SYSTEM_RUN_DENIED: allowlist miss", "allowlist-miss"))
        // sh -lc is a transport: every segment of the inner chain must match.
        #expect(try r.run(["command": Self.argv("/bin/sh", "-lc", "echo a | tr a b")])["payload"]?["stdout"] == "b\n")
        #expect(try denial(["command": Self.argv("/bin/sh", "-lc", "echo a && ls")]).reason == "allowlist-miss")
        #expect(try denial(["command": Self.argv("/bin/sh", "-lc", "echo $(id)")]).reason == "allowlist-miss", "expansions are not analysed")
        #expect(try denial(["command": Self.argv("tr", "x", "y")]).reason == "allowlist-miss", "argPattern")
        // An approval flag alone counts for nothing (ask is off in this config): SystemRunAttackTests.
        #expect(try denial(["command": Self.argv("ls", "/"), "approved": true]).reason == "allowlist-miss")
        // The STOP-list needs a fresh approval even under full security.
        try setPolicy(["security": "full"], allowlist: [])
        #expect(try denial(["command": Self.argv("rm", r.work + "/nothing")]) == ("SYSTEM_RUN_DENIED: denylist match; approval required at the device", "denylist-hit"))
        try setPolicy(["security": "full", "ask": "always"], allowlist: [])
        #expect(try denial(["command": Self.argv("true")]) == ("SYSTEM_RUN_DENIED: approval required", "approval-required"))
        try setPolicy(["security": "deny"], allowlist: [])
        #expect(try denial(["command": Self.argv("true")]) == ("SYSTEM_RUN_DISABLED: security=deny", "security=deny"))
        // allow-always (remembered for exactly that command): SystemRunAttackTests, with a config that lets operators be asked.
        // The gateway's plan must be the command that runs.
        #expect(try denial(["command": Self.argv("true"), "approved": true, "systemRunPlan": ["argv": Self.argv("false")]])
                == ("SYSTEM_RUN_DENIED: execution plan mismatch", "execution-plan-miss"))
        let prepared = try r.call("system.run.prepare", ["command": Self.argv("/bin/sh", "-lc", "echo hi"), "agentId": "main"])
        #expect(prepared["payload"]?["plan"]?["commandText"] == "echo hi" && prepared["payload"]?["execPolicy"]?["security"] == "deny",
                "\(prepared)")
        #expect(r.gw.schemaErrors.isEmpty, "\(r.gw.schemaErrors)")
    }

    @Test func disabledByDefault() throws {
        let e = CLIEnv(""); defer { e.cleanup() }
        let r = try runProcess(TestPaths.nodeBinary, ["invoke", "system.run", "--params", #"{"command":["true"]}"#, "--config", e.config], env: e.vars)
        #expect(JSONValue.parse(r.stdout)?["code"] == "SYSTEM_DISABLED", "\(r.stdout)\(r.stderr)")
    }
}

/// The pieces of the policy that need no process.
struct SystemPolicyUnitTests {
    @Test func sha256MatchesTheStandardVectors() {
        #expect(SHA256.hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(SHA256.hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(SHA256.hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")
                == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        #expect(SHA256.hex(String(repeating: "a", count: 1000)) == "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3")
    }

    /// The stored approvals text is laid out as JSON.stringify(file, null, 2) does; Python's
    /// json.dumps(indent=2, sort_keys=True, ensure_ascii=False) writes the same layout.
    @Test func approvalsTextMatchesTheJavaScriptLayout() throws {
        let doc: JSONValue = ["version": 1, "defaults": .object([:]), "agents": ["main": ["allowlist": [
            ["id": "a", "pattern": "/usr/bin/git", "argPattern": "^status \\d \"x\"", "lastUsedAt": 1764547200123,
             "lastUsedCommand": "echo 'héllo'\t\u{01}"]], "security": "allowlist"]], "list": .array([]), "flag": true, "none": .null]
        let text = doc.indentedText(indent: 2)
        let r = try runProcess("/usr/bin/python3", ["-c", "import json,sys; print(json.dumps(json.load(sys.stdin), indent=2, sort_keys=True, ensure_ascii=False), end='')"],
                               stdin: text)
        #expect(r.code == 0, "\(r.stderr)")
        #expect(text == r.stdout, "\(text)\n---\n\(r.stdout)")
    }

    @Test func shellChainsSplitLikeTheShell() {
        #expect(ShellAnalysis.split("echo 'a b' \"c d\" e\\ f && ls -l | wc -l; true || false") ==
                [["echo", "a b", "c d", "e f"], ["ls", "-l"], ["wc", "-l"], ["true"], ["false"]])
        #expect(ShellAnalysis.split("echo hi\n\nls # comment") == [["echo", "hi"], ["ls"]])
        for bad in ["echo $HOME", "echo `id`", "ls > x", "cat < x", "sleep 1 &", "(ls)", "echo 'open", "a &&& b", "; ls", "ls *.txt"] {
            #expect(ShellAnalysis.split(bad) == nil, "\(bad)")
        }
        #expect(ShellAnalysis.analyse(["/bin/sh", "-lc", "ls"], cwd: nil, path: nil).shellWrapper)
        #expect(ShellAnalysis.analyse(["bash", "-c", "ls"], cwd: nil, path: nil).segments == [["ls"]])
        #expect(!ShellAnalysis.analyse(["sh", "script.sh"], cwd: nil, path: nil).shellWrapper)
        #expect(!ShellAnalysis.analyse(["/tmp/sh", "-c", "ls"], cwd: nil, path: nil).shellWrapper, "not a system shell")
        let chain = ShellAnalysis.analyse(["/bin/sh", "-lc", "git status && echo 'a b' | wc -l\nls; true || false"], cwd: nil, path: nil)
        #expect(chain.separators == ["&&", "|", ";", ";", "||"])
        #expect(chain.pinnedScript(resolved: ["/usr/bin/git", "/usr/bin/echo", "/usr/bin/wc", "/usr/bin/ls", "/usr/bin/true", "/usr/bin/false"])
                == "/usr/bin/git status && /usr/bin/echo 'a b' | /usr/bin/wc -l ; /usr/bin/ls ; /usr/bin/true || /usr/bin/false")
        #expect(ShellAnalysis.split("ls &&") == nil, "a chain cannot end in an operator")
    }

    @Test func allowlistPatternsAreCanonicalAndBounded() {
        #expect(AllowlistPatterns.canonical("/bin/../usr/./bin/echo", home: "/h") == PathName.resolvingSymlinks("/usr/bin/echo"))
        #expect(AllowlistPatterns.canonical("~/bin/*", home: "/h") == "/h/bin/*")
        for p in ["**", "/**", "/*", "/**/*", "*", "??", "/*/bin"] { #expect(AllowlistPatterns.coversEverything(p), "\(p)") }
        for p in ["/usr/bin/*", "git", "g*", "/usr/**"] { #expect(!AllowlistPatterns.coversEverything(p), "\(p)") }
        #expect(AllowlistPatterns.within("/usr/bin/git", "/usr/bin/*"))
        #expect(AllowlistPatterns.within("/usr/bin/py*", "/usr/bin/*"))
        #expect(!AllowlistPatterns.within("/usr/bin/**", "/usr/bin/*"))
        #expect(AllowlistPatterns.within("/usr/bin/**", "/usr/**"))
        #expect(!AllowlistPatterns.within("/usr/lib/x", "/usr/bin/*"))
        #expect(!AllowlistPatterns.within("/usr/bin/a/b", "/usr/bin/?"))
        #expect(InlineEval.gitConfig(["git", "-C", "/r", "-c", "a=b", "status"]))
        #expect(!InlineEval.gitConfig(["git", "commit", "-c", "HEAD"]))
    }

    @Test func globsOverPaths() {
        #expect(PathGlob.matches("/usr/bin/*", "/usr/bin/ls", home: "/h"))
        #expect(!PathGlob.matches("/usr/*", "/usr/bin/ls", home: "/h"))
        #expect(PathGlob.matches("/usr/**", "/usr/bin/ls", home: "/h"))
        #expect(PathGlob.matches("~/Projects/**/bin/rg", "/h/Projects/a/b/bin/rg", home: "/h"))
        #expect(PathGlob.matches("~/Projects/**/bin/rg", "/h/Projects/bin/rg", home: "/h"))
        #expect(PathGlob.matches("/usr/bin/python3.?", "/usr/bin/python3.9", home: "/h"))
        #expect(!PathGlob.matches("/usr/bin/python3.?", "/usr/bin/python3.11", home: "/h"))
    }

    @Test func policyOrderFollowsUpstream() {
        var i = ExecPolicy.Input(security: .allowlist, ask: .onMiss, analysisOk: true, allowlistSatisfied: false,
                                 durableApproval: false, denylisted: false, approvedByAsk: false)
        #expect(ExecPolicy.evaluate(i)?.reason == "approval-required")
        i.durableApproval = true
        #expect(ExecPolicy.evaluate(i) == nil)
        i.ask = .off; i.durableApproval = false
        #expect(ExecPolicy.evaluate(i)?.reason == "allowlist-miss")
        i.denylisted = true
        #expect(ExecPolicy.evaluate(i)?.reason == "denylist-hit")
        i.security = .deny
        #expect(ExecPolicy.evaluate(i)?.reason == "security=deny")
    }
}

/// capabilities.system.sandbox: "bwrap", through the real daemon (bubblewrap from Debian).
@Suite(.serialized) struct SystemSandboxTests {
    @Test func bwrapConfinesWritesTmpAndNetwork() throws {
        let shared = TestPaths.tempDir("sbx-shared")
        let r = try SystemRunTests.Rig(system: "sandbox: 'bwrap', sandboxNetwork: false, sandboxWritable: ['\(shared)']")
        defer { r.stop() }
        func sh(_ script: String, cwd: String? = nil) throws -> JSONValue {
            var p: [String: JSONValue] = ["command": SystemRunTests.argv("/bin/sh", "-c", script)]
            if let cwd { p["cwd"] = .string(cwd) }
            return try #require(r.run(.object(p))["payload"], "\(r.node.log)")
        }
        // cwd and the configured path are writable; the rest of the system is not.
        #expect(try sh("echo a > in-cwd && echo b > \(shared)/in-shared && cat in-cwd", cwd: r.work)["stdout"] == "a\n")
        #expect(FileManager.default.fileExists(atPath: r.work + "/in-cwd") && FileManager.default.fileExists(atPath: shared + "/in-shared"))
        let outsidePath = "/opt/ocn-sbx-\(getpid())"
        let outside = try sh("echo x > \(outsidePath)", cwd: r.work)
        #expect(outside["success"] == false && outside["stderr"]?.stringValue?.contains("Read-only") == true, "\(outside)")
        #expect(!FileManager.default.fileExists(atPath: outsidePath))
        // A private /tmp: what the command writes there is gone, and the host's files are not visible.
        let marker = "/tmp/ocn-sbx-marker-\(getpid())"
        _ = FileManager.default.createFile(atPath: marker, contents: Data("host".utf8)); defer { unlink(marker) }
        let tmp = try sh("echo inside > /tmp/from-inside; ls /tmp; cat \(marker) 2>&1 || true")
        #expect(tmp["stdout"]?.stringValue?.contains("from-inside") == true && tmp["stdout"]?.stringValue?.contains("No such file") == true, "\(tmp)")
        #expect(!FileManager.default.fileExists(atPath: "/tmp/from-inside"))
        // The node's state (device key) and config are hidden.
        let state = try sh("ls -A \(r.node.dir)/state; cat \(r.node.configPath) 2>/dev/null | wc -c")
        #expect(state["stdout"] == "0\n", "\(state)")
        // No network: a loopback listener on the host is unreachable from inside.
        let listener = try bindLoopback(); defer { close(listener.fd) }
        listen(listener.fd, 4)
        let net = try sh("python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", \(listener.port)), 2)' 2>&1; echo rc=$?")
        #expect(net["stdout"]?.stringValue?.contains("rc=1") == true, "\(net)")
        // The timeout still kills everything inside.
        let slow = try r.run(["command": SystemRunTests.argv("/bin/sh", "-c", "sleep 67 & sleep 67"), "timeoutMs": 500])
        #expect(slow["payload"]?["timedOut"] == true)
        #expect(waitUntil(timeout: 5) { (try? runProcess("/usr/bin/pgrep", ["-x", "-f", "sleep 67"]))?.stdout.isEmpty ?? false }, "sleep survived the sandbox")
        try? FileManager.default.removeItem(atPath: shared)
    }
}

/// `openclaw-node approvals …` next to a running daemon: the daemon decides with the edited
/// document at once, and the CLI's writes go through the same hash check.
@Suite(.serialized) struct ApprovalsCLITests {
    @Test func editsTakeEffectInTheRunningDaemon() throws {
        let r = try SystemRunTests.Rig(); defer { r.stop() }
        func cli(_ args: String...) throws -> ProcessResult { try r.node.cli(["approvals"] + args) }
        #expect(try cli("policy", "--security", "allowlist").code == 0)
        let denied = try r.run(["command": SystemRunTests.argv("echo", "hi")])
        #expect(denied["error"]?["message"] == "SYSTEM_RUN_DENIED: allowlist miss", "\(denied)")
        let allow = try cli("allow", "/usr/bin/echo", "--args", "^hi$")
        #expect(allow.code == 0, "\(allow.stderr)")
        #expect(try r.run(["command": SystemRunTests.argv("echo", "hi")])["payload"]?["stdout"] == "hi\n")
        #expect(try r.run(["command": SystemRunTests.argv("echo", "ho")])["ok"] == false, "argument regex")
        let shown = try cli("show", "--json")
        let doc = try #require(JSONValue.parse(shown.stdout), "\(shown.stdout)\(shown.stderr)")
        let id = try #require(doc["file"]?["agents"]?["main"]?["allowlist"]?.arrayValue?.first?["id"]?.stringValue)
        // The gateway's view is the same document, hash included.
        let viaGateway = try r.call("system.execApprovals.get")
        #expect(viaGateway["payload"]?["hash"] == doc["hash"])
        #expect(try cli("show").stdout.contains("\(id)  /usr/bin/echo args /^hi$/"))
        #expect(try cli("remove", id).code == 0)
        let afterRemove = try r.run(["command": SystemRunTests.argv("echo", "hi")])
        let shownAfter = try cli("show").stdout
        #expect(afterRemove["ok"] == false, "\(afterRemove)\n\(shownAfter)")
        let missing = try cli("remove", id)
        #expect(missing.code == 1 && missing.stderr.contains("no allowlist entry has id"))
        let bad = try cli("policy", "--ask", "sometimes")
        #expect(bad.code == 1 && bad.stderr.contains("file.defaults.ask must be one of off, on-miss, always"), "\(bad.stderr)")
    }
}
