import Foundation
@testable import Support
@testable import TestSupport
import Testing

/// The trust boundary of system.run (docs/SECURITY.md), attacked through the real daemon, the test
/// gateway and real bwrap: each attack must be refused with its message, and the legitimate use
/// next to it must still work.
@Suite(.serialized) struct SystemRunAttackTests {
    typealias Rig = SystemRunTests.Rig
    static func argv(_ w: String...) -> JSONValue { .array(w.map { .string($0) }) }

    static func setPolicy(_ r: Rig, _ defaults: JSONValue, allowlist: [JSONValue]) throws -> JSONValue {
        let base = try r.call("system.execApprovals.get")["payload"]?["hash"]?.stringValue
        return try r.call("system.execApprovals.set", ["file": ["version": 1, "defaults": defaults,
                                                               "agents": ["main": ["allowlist": .array(allowlist)]]],
                                                      "baseHash": .string(base ?? "")])
    }

    static func message(_ res: JSONValue) -> String { res["error"]?["message"]?.stringValue ?? "(ok: \(res))" }

    // MARK: 1. the sandbox cannot be opened from the request

    @Test func sandboxKeepsTheStateAndConfigHiddenWhateverTheCwd() throws {
        let r = try Rig(system: "sandbox: 'bwrap'"); defer { r.stop() }
        let state = r.node.dir + "/state"
        try FileManager.default.createSymbolicLink(atPath: r.work + "/to-state", withDestinationPath: state)
        try FileManager.default.createSymbolicLink(atPath: r.work + "/to-home", withDestinationPath: r.node.dir)
        let attacks: [(cwd: String, says: String)] = [
            (r.node.dir, "contains the node's state or config"),   // the daemon's HOME, which holds the state and the config
            (state, "contains the node's state or config"),
            (state + "/keys", "is inside the node's state directory"),
            (state + "/..", "contains the node's state or config"),
            (r.work + "/to-state", "contains the node's state or config"),   // a symlink is judged by its target
            (r.work + "/to-home", "contains the node's state or config"),
            ("/root", "is a home directory"),
            ("/", "is the root directory"),
            ("/home", "above a home directory"),
        ]
        for a in attacks {
            let res = try r.run(["command": Self.argv("/bin/sh", "-c", "cat state/state.db config.json5; ls -A"), "cwd": .string(a.cwd)])
            #expect(res["ok"] == false && Self.message(res).hasPrefix("SYSTEM_RUN_DENIED: sandbox: cwd \"\(a.cwd)\"")
                    && Self.message(res).contains(a.says), "\(a.cwd): \(res)")
            let prep = try r.call("system.run.prepare", ["command": Self.argv("ls"), "cwd": .string(a.cwd)])
            #expect(prep["error"]?["code"] == "INVALID_REQUEST" && Self.message(prep).contains(a.says), "prepare \(a.cwd): \(prep)")
        }
        #expect(!r.gw.all("node_event").contains { $0["name"] == "exec.finished" }, "nothing ran")
        // A project directory in the home still works, and the state stays hidden from it.
        let ok = try r.run(["command": Self.argv("/bin/sh", "-c", "echo made > f && cat f && ls -A \(state) | wc -l"), "cwd": .string(r.work)])
        #expect(ok["payload"]?["stdout"] == "made\n0\n", "\(ok)")
    }

    /// Hidden with the config: the desktop's VNC password file (here in the real home, which the
    /// sandbox shows read-only), and a project holding it is refused as a cwd like one holding the
    /// config. (The config's editor backups: FilesPolicyAttackTests.)
    @Test func theDesktopPasswordIsHidden() throws {
        let dir = (ProcessInfo.processInfo.environment["HOME"] ?? "/root") + "/.cache/openclaw-node/vnc-probe-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        _ = FileManager.default.createFile(atPath: dir + "/passwd", contents: Data("desk-pass-123\n".utf8), attributes: [.posixPermissions: 0o600])
        _ = FileManager.default.createFile(atPath: dir + "/notes", contents: Data("plain\n".utf8))
        let r = try Rig(system: "sandbox: 'bwrap' }, desktop: { passwordFile: '\(dir)/passwd'"); defer { r.stop() }
        let res = try r.run(["command": Self.argv("/bin/sh", "-c", "cat \(dir)/passwd \(dir)/notes"), "cwd": .string(r.work)])
        #expect(res["payload"]?["stdout"] == "plain\n", "the sandbox showed: \(res)")
        let inside = try r.run(["command": Self.argv("ls"), "cwd": .string(dir)])
        #expect(Self.message(inside).contains("contains the node's state or config (\(dir)/passwd)"), "\(inside)")
    }

    @Test func aWritablePathThatUncoversTheStateIsRefusedAtStart() throws {
        let node = NodeUnderTest(gatewayURL: "ws://127.0.0.1:9", extra: "capabilities: { system: { enabled: true, sandbox: 'bwrap', sandboxWritable: ['/'] } }")
        defer { node.cleanup() }
        let res = try node.cli(["invoke", "system.run", "--local", "--params", #"{"command":["true"]}"#])
        let v = JSONValue.parse(res.stdout)
        #expect(v?["code"] == "SYSTEM_UNAVAILABLE" && v?["message"]?.stringValue?.contains("sandboxWritable: \"/\" is the root directory") == true,
                "\(res.stdout)\(res.stderr)")
        let home = NodeUnderTest(gatewayURL: "ws://127.0.0.1:9", extra: "")
        defer { home.cleanup() }
        home.rewriteConfig(gatewaySection: "url: 'ws://127.0.0.1:9'",
                           extra: "capabilities: { system: { enabled: true, sandbox: 'bwrap', sandboxWritable: ['\(home.dir)'] } }")
        let h = JSONValue.parse(try home.cli(["invoke", "system.run", "--local", "--params", #"{"command":["true"]}"#]).stdout)
        #expect(h?["message"]?.stringValue?.contains("sandboxWritable: \"\(home.dir)\" contains the node's state or config") == true, "\(String(describing: h))")
    }

    @Test func noNetworkMeansNoUnixSocketsEither() throws {
        let r = try Rig(system: "sandbox: 'bwrap', sandboxNetwork: false"); defer { r.stop() }
        // A listener on the host, in a directory the command can read (its own cwd).
        let path = r.work + "/host.sock"
        let listener = try UnixListener(path); defer { listener.close() }
        // The socket(2) call itself is refused (EACCES), so no path or abstract name helps.
        let script = "import socket, sys\ntry:\n s = socket.socket(socket.AF_UNIX)\n s.connect(sys.argv[1])\n print('connected')\nexcept OSError as e:\n print('refused', e.errno)"
        for target in [path, "\0/tmp/.X11-unix/X0"] {
            let res = try r.run(["command": Self.argv("/usr/bin/python3", "-c", script, target), "cwd": .string(r.work)])
            #expect(res["payload"]?["stdout"] == "refused 13\n", "\(target): \(res)")
        }
        let run = try r.run(["command": Self.argv("/bin/sh", "-c", "ls -A /run | wc -l"), "cwd": .string(r.work)])
        #expect(run["payload"]?["stdout"] == "0\n", "a private, empty /run (no session bus): \(run)")
        #expect(!listener.hasPendingConnection, "something reached the host's socket")
        // The second door: io_uring makes and connects sockets without socket(2) (IORING_OP_SOCKET,
        // IORING_OP_CONNECT). The whole interface is refused: io_uring_setup answers ENOSYS (38).
        let uring = "import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\np = ctypes.create_string_buffer(120)\nfd = libc.syscall(425, 8, p)\nprint(fd, ctypes.get_errno())"
        let boxed = try r.run(["command": Self.argv("/usr/bin/python3", "-c", uring), "cwd": .string(r.work)])
        #expect(boxed["payload"]?["stdout"] == "-1 38\n", "io_uring inside the sandbox: \(boxed)")
        #expect(!listener.hasPendingConnection, "something reached the host's socket")
        // Pipes and files still work; so does a TCP socket on the private loopback.
        let ok = try r.run(["command": Self.argv("/bin/sh", "-c", "echo a | tr a b > out && cat out"), "cwd": .string(r.work)])
        #expect(ok["payload"]?["stdout"] == "b\n", "\(ok)")
        // With the network on, sockets are the command's own business (documented).
        let open = try Rig(system: "sandbox: 'bwrap'"); defer { open.stop() }
        let on = try open.run(["command": Self.argv("/usr/bin/python3", "-c", script, path), "cwd": .string(r.work)])
        #expect(on["payload"]?["stdout"] == "connected\n", "\(on)")
        #expect(listener.hasPendingConnection, "the control: the same connect works with the network on")
        // The control for io_uring too (where the kernel offers it: kernel.io_uring_disabled 0).
        if (try? String(contentsOfFile: "/proc/sys/kernel/io_uring_disabled", encoding: .utf8))?.hasPrefix("0") ?? true {
            let free = try open.run(["command": Self.argv("/usr/bin/python3", "-c", uring), "cwd": .string(r.work)])
            #expect(free["payload"]?["stdout"]?.stringValue?.hasPrefix("-1") == false, "io_uring with the network on: \(free)")
        }
    }

    // MARK: 2 and 3. what runs is what was checked

    /// A repository with one commit, and the allowlist naming git alone.
    static func gitRig(_ system: String = "") throws -> (Rig, String) {
        let r = try Rig(system: system)
        let repo = r.work + "/repo"
        try FileManager.default.createDirectory(atPath: repo, withIntermediateDirectories: true)
        #expect(try runProcess("/usr/bin/git", ["init", "-q", repo]).code == 0)
        let policy = try setPolicy(r, ["security": "allowlist"], allowlist: [["pattern": "/usr/bin/git"]])
        #expect(policy["ok"] == true, "\(policy)")
        return (r, repo)
    }

    @Test func aProgramNamedShIsNotATransport() throws {
        let (r, repo) = try Self.gitRig(); defer { r.stop() }
        // A "sh" the agent brought along (a cloned repository's, a download).
        let cloned = r.work + "/cloned"
        try FileManager.default.createDirectory(atPath: cloned, withIntermediateDirectories: true)
        let fake = cloned + "/sh"
        _ = FileManager.default.createFile(atPath: fake, contents: Data("#!/bin/sh\necho FAKE-SHELL-RAN\n".utf8),
                                           attributes: [.posixPermissions: 0o755])
        for (argv0, cwd) in [(fake, repo), ("./sh", cloned)] {
            let res = try r.run(["command": Self.argv(argv0, "-lc", "git status"), "cwd": .string(cwd)])
            #expect(Self.message(res) == "SYSTEM_RUN_DENIED: allowlist miss", "\(argv0): \(res)")
        }
        // A copy of a real shell outside the system's places is not one either.
        let copy = r.work + "/bash"
        try FileManager.default.copyItem(atPath: "/usr/bin/bash", toPath: copy)
        #expect(Self.message(try r.run(["command": Self.argv(copy, "-c", "git status"), "cwd": .string(repo)])) == "SYSTEM_RUN_DENIED: allowlist miss")
        // The system's shell is the transport; the allowlisted git runs.
        let ok = try r.run(["command": Self.argv("/bin/sh", "-lc", "git status --short && git rev-parse --is-inside-work-tree"), "cwd": .string(repo)])
        #expect(ok["payload"]?["stdout"] == "true\n", "\(ok)")
    }

    @Test func theLoginProfileCannotSwapTheProgram() throws {
        let (r, repo) = try Self.gitRig(); defer { r.stop() }
        // HOME is the node's folder: its ~/.profile puts ~/.local/bin first, where a git is planted.
        let bin = r.node.dir + "/.local/bin"
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: bin + "/git", contents: Data("#!/bin/sh\necho PLANTED-GIT\n".utf8),
                                           attributes: [.posixPermissions: 0o755])
        _ = FileManager.default.createFile(atPath: r.node.dir + "/.profile", contents: Data("PATH=\"$HOME/.local/bin:$PATH\"\n".utf8))
        let sanity = try runProcess("/bin/sh", ["-lc", "git"], env: ["HOME": r.node.dir, "PATH": "/usr/bin:/bin"])
        #expect(sanity.stdout.contains("PLANTED-GIT"), "the plant works for a login shell")
        let which = try r.call("system.which", ["bins": ["git"]])
        #expect(which["payload"]?["bins"]?["git"] == "/usr/bin/git")
        let res = try r.run(["command": Self.argv("/bin/sh", "-lc", "git --version"), "cwd": .string(repo)])
        let out = res["payload"]?["stdout"]?.stringValue ?? ""
        #expect(out.hasPrefix("git version") && !out.contains("PLANTED"), "\(res)")
    }

    // MARK: 4. the environment a request may set

    @Test func environmentKeysOutsideTheAllowlistAreRefusedByName() throws {
        let (r, repo) = try Self.gitRig("envAllow: ['MY_FLAG']"); defer { r.stop() }
        for key in ["GIT_ALLOW_PROTOCOL", "GIT_CONFIG_COUNT", "GIT_CONFIG_KEY_0", "GIT_SSH_COMMAND", "PERL5DB", "PERL5OPT", "PYTHONSTARTUP",
                    "PYTHONWARNINGS", "LOCPATH", "PAGER", "GIT_PAGER", "LESSOPEN", "MANPAGER", "BASH_ENV", "LD_PRELOAD", "HOME"] {
            let res = try r.run(["command": Self.argv("git", "status"), "cwd": .string(repo), "env": [key: "ext"]])
            #expect(Self.message(res) == "SYSTEM_RUN_DENIED: environment override rejected (blocked override keys: \(key))", "\(key): \(res)")
        }
        let path = try r.run(["command": Self.argv("git", "status"), "cwd": .string(repo), "env": ["LC_ALL": "/tmp/evil-locale"]])
        #expect(Self.message(path) == "SYSTEM_RUN_DENIED: environment override rejected (unsafe override values: LC_ALL)", "\(path)")
        let prep = try r.call("system.run.prepare", ["command": Self.argv("git", "status"), "env": ["GIT_ALLOW_PROTOCOL": "ext"]])
        #expect(prep["error"]?["code"] == "INVALID_REQUEST" && Self.message(prep).contains("GIT_ALLOW_PROTOCOL"), "\(prep)")
        // Terminal and locale settings, and what the operator allows, still pass.
        let ok = try r.run(["command": Self.argv("/bin/sh", "-lc", "git status --short && git --version"),
                            "cwd": .string(repo), "env": ["LANG": "C.UTF-8", "TERM": "dumb", "MY_FLAG": "1"]])
        #expect(ok["payload"]?["stdout"]?.stringValue?.hasPrefix("git version") == true, "\(ok)")
        let full = try Rig(system: "envAllow: ['MY_FLAG']"); defer { full.stop() }
        let env = try full.run(["command": Self.argv("env"), "env": ["LANG": "C.UTF-8", "MY_FLAG": "1"]])
        let text = env["payload"]?["stdout"]?.stringValue ?? ""
        #expect(text.contains("LANG=C.UTF-8") && text.contains("MY_FLAG=1"), "\(text)")
    }

    /// The recommended config's git entry (docs/SECURITY.md "Running the node tightly"): an allowed
    /// `git log --output=.git/config` wrote a core.fsmonitor hook that the next allowed `git status`
    /// ran. Neither half goes through now, for any key that names a program, however it was written.
    @Test func anAllowlistedGitCannotBeMadeToRunAnotherProgram() throws {
        let (r, repo) = try Self.gitRig("sandbox: 'bwrap'"); defer { r.stop() }
        _ = try Self.setPolicy(r, ["security": "allowlist"], allowlist: [["pattern": "/usr/bin/git", "argPattern": "^(status|diff|log)( |$)"]])
        let pwned = r.work + "/pwned"
        let evil = r.work + "/evil.sh"
        _ = FileManager.default.createFile(atPath: evil, contents: Data("#!/bin/sh\ntouch \(pwned)\n".utf8), attributes: [.posixPermissions: 0o755])
        _ = FileManager.default.createFile(atPath: repo + "/f", contents: Data("one\n".utf8))
        #expect(try runProcess("/usr/bin/git", ["-C", repo, "add", "f"]).code == 0)
        #expect(try runProcess("/usr/bin/git", ["-C", repo, "-c", "user.email=a@b", "-c", "user.name=a", "commit", "-qm", "one"]).code == 0)
        // The legitimate use first.
        let ok = try r.run(["command": Self.argv("git", "log", "--oneline"), "cwd": .string(repo)])
        #expect(ok["payload"]?["stdout"]?.stringValue?.contains("one") == true, "\(ok)")
        // The writing half: options that write a file or name a program.
        for argv in [Self.argv("git", "log", "--output=.git/config"), Self.argv("git", "log", "--output", ".git/config"),
                     Self.argv("git", "diff", "--ext-diff"), Self.argv("git", "log", "--textconv", "-p"),
                     Self.argv("git", "diff", "--output=\(r.node.dir)/.gitconfig")] {
            let res = try r.run(["command": argv, "cwd": .string(repo)])
            #expect(Self.message(res).hasPrefix("SYSTEM_RUN_DENIED: git --"), "\(argv): \(res)")
        }
        // The running half: whatever wrote the config (another allowed program, an earlier run),
        // a key that names a program stops the allowlisted git before it starts.
        let cases: [(String, [String], JSONValue)] = [
            ("core.fsmonitor", ["core.fsmonitor", evil], Self.argv("git", "status")),
            ("diff.external", ["diff.external", evil], Self.argv("git", "diff")),
            ("diff.x.textconv", ["diff.x.textconv", evil], Self.argv("git", "log", "-p")),
            ("filter.x.clean", ["filter.x.clean", evil], Self.argv("git", "status")),
        ]
        try "f diff=x filter=x\n".write(toFile: repo + "/.gitattributes", atomically: true, encoding: .utf8)
        _ = FileManager.default.createFile(atPath: repo + "/f", contents: Data("two\n".utf8))
        for (key, config, argv) in cases {
            #expect(try runProcess("/usr/bin/git", ["-C", repo, "config"] + config).code == 0)
            let res = try r.run(["command": argv, "cwd": .string(repo)])
            #expect(Self.message(res).contains("sets \(key), which makes git run a program"), "\(key): \(res)")
            #expect(!FileManager.default.fileExists(atPath: pwned), "\(key) ran")
            #expect(try runProcess("/usr/bin/git", ["-C", repo, "config", "--unset", config[0]]).code == 0)
        }
        // The second pass's variants: config and programs on the command line, option prefixes and
        // clusters, subcommands that run programs, git under another name.
        _ = try Self.setPolicy(r, ["security": "allowlist"], allowlist: [["pattern": "/usr/bin/git", "argPattern": ".*"]])
        let variants: [[String]] = [
            ["git", "-c", "alias.x=!touch \(pwned)", "x"], ["git", "-c", "core.fsmonitor=\(evil)", "status"],
            ["git", "-ccore.pager=\(evil)", "log"], ["git", "grep", "-nO\(evil)", "one"], ["git", "grep", "--open=\(evil)", "one"],
            ["git", "fetch", "--upload-p=\(evil)", "."], ["git", "clone", "-u", evil, ".", "\(r.work)/c"],
            ["git", "rebase", "-x", evil, "HEAD"], ["git", "difftool", "-x", evil], ["git", "bisect", "run", evil],
            ["git", "submodule", "foreach", evil], ["/usr/lib/git-core/git-grep", "-O\(evil)", "one"],
        ]
        for argv in variants {
            let res = try r.run(["command": .array(argv.map { .string($0) }), "cwd": .string(repo)])
            // (git-core's git-grep is a program of its own there: not the allowlisted /usr/bin/git at all.)
            #expect(Self.message(res).hasPrefix(argv[0].hasPrefix("/usr/lib") ? "SYSTEM_RUN_DENIED" : "SYSTEM_RUN_DENIED: git"), "\(argv): \(res)")
        }
        #expect(!FileManager.default.fileExists(atPath: pwned))
        // A hook written by an allowed command never runs: hooks are off for an allowlisted git.
        try FileManager.default.createDirectory(atPath: repo + "/.git/hooks", withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: repo + "/.git/hooks/pre-commit", contents: Data("#!/bin/sh\ntouch \(pwned)\n".utf8), attributes: [.posixPermissions: 0o755])
        let commit = try r.run(["command": Self.argv("git", "-c", "user.email=a@b", "-c", "user.name=a", "commit", "-qam", "two"), "cwd": .string(repo)])
        #expect(commit["payload"]?["success"] == true, "\(commit)")
        #expect(!FileManager.default.fileExists(atPath: pwned), "the hook ran")
        // Legitimate forms the rules must not catch: grep -o / -c, ls-files -o, log --oneline, -c of a plain setting.
        for argv in [["git", "grep", "-oc", "one"], ["git", "ls-files", "-o"], ["git", "log", "--oneline", "-1"], ["git", "-c", "color.ui=never", "status"]] {
            let res = try r.run(["command": .array(argv.map { .string($0) }), "cwd": .string(repo)])
            #expect(!Self.message(res).hasPrefix("SYSTEM_RUN_DENIED"), "\(argv): \(res)")
        }
        _ = try Self.setPolicy(r, ["security": "allowlist"], allowlist: [["pattern": "/usr/bin/git", "argPattern": "^(status|diff|log)( |$)"]])
        // ~/.gitconfig is this account's too; an include is followed.
        try "[include]\n\tpath = \(r.work)/inc\n".write(toFile: r.node.dir + "/.gitconfig", atomically: true, encoding: .utf8)
        try "[core]\n\tfsmonitor = \(evil)\n".write(toFile: r.work + "/inc", atomically: true, encoding: .utf8)
        let included = try r.run(["command": Self.argv("git", "status"), "cwd": .string(repo)])
        #expect(Self.message(included).contains("sets core.fsmonitor"), "\(included)")
        try FileManager.default.removeItem(atPath: r.node.dir + "/.gitconfig")
        // With the config clean again, the allowed commands run (and nothing else did).
        let status = try r.run(["command": Self.argv("git", "status", "--short"), "cwd": .string(repo)])
        #expect(status["payload"]?["success"] == true, "\(status)")
        #expect(!FileManager.default.fileExists(atPath: pwned))
    }

    @Test func gitConfigOnTheCommandLineIsInlineEvaluation() throws {
        let (r, repo) = try Self.gitRig(); defer { r.stop() }
        let pwned = r.work + "/pwned"
        for argv in [Self.argv("git", "-c", "alias.st=!touch \(pwned)", "st"),
                     Self.argv("git", "-c", "core.pager=touch \(pwned)", "-p", "log"),
                     Self.argv("git", "-C", repo, "-c", "core.fsmonitor=touch \(pwned)", "status"),
                     Self.argv("git", "--config-env=core.sshCommand=HOME", "status"),
                     Self.argv("git", "-calias.x=!touch \(pwned)", "x")] {
            let res = try r.run(["command": argv, "cwd": .string(repo)])
            #expect(Self.message(res) == "SYSTEM_RUN_DENIED: allowlist miss", "\(argv): \(res)")
        }
        #expect(!FileManager.default.fileExists(atPath: pwned))
        // An entry with an argument pattern is the operator's explicit choice.
        _ = try Self.setPolicy(r, ["security": "allowlist"], allowlist: [["pattern": "/usr/bin/git", "argPattern": "^-c color\\.ui=never status$"]])
        let ok = try r.run(["command": Self.argv("git", "-c", "color.ui=never", "status"), "cwd": .string(repo)])
        #expect(ok["payload"]?["success"] == true, "\(ok)")
    }

    // MARK: 5. approvals never exceed the config

    @Test func aGatewayApprovalFlagAloneRunsNothing() throws {
        let r = try Rig(system: "denylist: ['/usr/bin/rm']"); defer { r.stop() }   // ask: off (the default)
        _ = try Self.setPolicy(r, ["security": "allowlist"], allowlist: [["pattern": "/usr/bin/echo"]])
        for extra: JSONValue in [["approved": true], ["approvalDecision": "allow-once"], ["approvalDecision": "allow-always"],
                                 ["approved": true, "systemRunPlan": ["argv": Self.argv("ls", "/")]]] {
            var p = extra.objectValue!
            p["command"] = Self.argv("ls", "/")
            #expect(Self.message(try r.run(.object(p))) == "SYSTEM_RUN_DENIED: allowlist miss", "\(extra)")
        }
        _ = try Self.setPolicy(r, ["security": "full"], allowlist: [])
        let victim = r.work + "/keep"
        _ = FileManager.default.createFile(atPath: victim, contents: Data("x".utf8))
        let rm = try r.run(["command": Self.argv("rm", victim), "approved": true, "approvalDecision": "allow-once"])
        #expect(Self.message(rm) == "SYSTEM_RUN_DENIED: denylist match; approval required at the device", "\(rm)")
        #expect(FileManager.default.fileExists(atPath: victim))
        #expect(try r.run(["command": Self.argv("echo", "fine")])["payload"]?["stdout"] == "fine\n")
    }

    @Test func anApprovalCountsOnceForThePlanThisNodePrepared() throws {
        let r = try Rig(system: "ask: 'on-miss', denylist: ['/usr/bin/rm']"); defer { r.stop() }
        _ = try Self.setPolicy(r, ["security": "allowlist"], allowlist: [["pattern": "/usr/bin/echo"]])
        let cmd = Self.argv("ls", r.work)
        #expect(Self.message(try r.run(["command": cmd, "approved": true])) == "SYSTEM_RUN_DENIED: approval required", "no plan")
        let prep = try r.call("system.run.prepare", ["command": cmd, "cwd": .string(r.work), "agentId": "main"])
        let plan = try #require(prep["payload"]?["plan"], "\(prep)")
        // The approved plan with another environment, another agent or another cwd does not count.
        #expect(Self.message(try r.run(["command": cmd, "cwd": .string(r.work), "approved": true, "systemRunPlan": plan,
                                        "env": ["LANG": "C"]])) == "SYSTEM_RUN_DENIED: approval required")
        #expect(Self.message(try r.run(["command": cmd, "cwd": .string(r.work), "approved": true, "systemRunPlan": plan,
                                        "agentId": "other"])) == "SYSTEM_RUN_DENIED: approval required")
        #expect(Self.message(try r.run(["command": Self.argv("ls", "/etc"), "cwd": .string(r.work), "approved": true, "systemRunPlan": plan]))
                == "SYSTEM_RUN_DENIED: execution plan mismatch")
        let ok = try r.run(["command": cmd, "cwd": .string(r.work), "approved": true, "systemRunPlan": plan, "agentId": "main"])
        #expect(ok["payload"]?["success"] == true, "\(ok)")
        let replay = try r.run(["command": cmd, "cwd": .string(r.work), "approved": true, "systemRunPlan": plan, "agentId": "main"])
        #expect(Self.message(replay) == "SYSTEM_RUN_DENIED: approval required", "an approval is used once: \(replay)")
        // allow-always through a prepared plan is remembered for exactly that command.
        let p2 = try r.call("system.run.prepare", ["command": Self.argv("uname")])["payload"]?["plan"] ?? .null
        #expect(try r.run(["command": Self.argv("uname"), "approvalDecision": "allow-always", "systemRunPlan": p2])["payload"]?["success"] == true)
        #expect(try r.run(["command": Self.argv("uname")])["payload"]?["success"] == true, "remembered")
        #expect(Self.message(try r.run(["command": Self.argv("uname", "-a")])) == "SYSTEM_RUN_DENIED: approval required")
        // The denylist never yields to the gateway: it can prepare a plan and "approve" it itself.
        let victim = r.work + "/gone"
        _ = FileManager.default.createFile(atPath: victim, contents: Data("x".utf8))
        _ = try Self.setPolicy(r, ["security": "full"], allowlist: [])
        #expect(Self.message(try r.run(["command": Self.argv("rm", victim), "approved": true])) == "SYSTEM_RUN_DENIED: denylist match; approval required at the device")
        let p3 = try r.call("system.run.prepare", ["command": Self.argv("rm", victim)])["payload"]?["plan"] ?? .null
        let selfApproved = try r.run(["command": Self.argv("rm", victim), "approved": true, "approvalDecision": "allow-once", "systemRunPlan": p3])
        #expect(Self.message(selfApproved).hasPrefix("SYSTEM_RUN_DENIED: denylist match; approval required at the device (plan "), "\(selfApproved)")
        #expect(FileManager.default.fileExists(atPath: victim))
        // A person at the device approves that plan: it runs, once.
        let id = try Self.approveAtDevice(r, command: "rm")
        #expect(try r.run(["command": Self.argv("rm", victim), "approved": true, "systemRunPlan": p3])["payload"]?["success"] == true)
        #expect(!FileManager.default.fileExists(atPath: victim))
        _ = FileManager.default.createFile(atPath: victim, contents: Data("x".utf8))
        #expect(Self.message(try r.run(["command": Self.argv("rm", victim), "approved": true, "systemRunPlan": p3])).hasPrefix("SYSTEM_RUN_DENIED: denylist match"), "plan \(id) was used once")
        #expect(FileManager.default.fileExists(atPath: victim))
    }

    /// `openclaw-node approvals pending` names the waiting plan whose command contains `command`;
    /// `approvals approve` approves it through the running daemon. Returns its id.
    static func approveAtDevice(_ r: Rig, command: String) throws -> String {
        let pending = try r.node.cli(["approvals", "pending", "--json"])
        let plans = JSONValue.parse(pending.stdout)?.arrayValue ?? []
        let id = try #require(plans.first { $0["command"]?.stringValue?.contains(command) == true }?["id"]?.stringValue, "\(pending.stdout)\(pending.stderr)")
        let approve = try r.node.cli(["approvals", "approve", id])
        #expect(approve.code == 0 && approve.stdout.contains("approved plan \(id)"), "\(approve.stdout)\(approve.stderr)")
        return id
    }

    @Test func withDeviceApprovalsOnlyAnApprovalMadeHereCounts() throws {
        let r = try Rig(system: "ask: 'always', approvals: 'device'"); defer { r.stop() }
        let cmd = Self.argv("touch", r.work + "/made")
        let plan = try #require(try r.call("system.run.prepare", ["command": cmd])["payload"]?["plan"])
        // The gateway's own approval of the plan it prepared: refused, with what to do at the device.
        let forged = try r.run(["command": cmd, "approved": true, "approvalDecision": "allow-once", "systemRunPlan": plan])
        #expect(Self.message(forged).hasPrefix("SYSTEM_RUN_DENIED: approval required (plan "), "\(forged)")
        #expect(Self.message(forged).contains("openclaw-node approvals approve"))
        #expect(!FileManager.default.fileExists(atPath: r.work + "/made"))
        #expect(r.node.log.contains("capabilities.system.approvals is \"device\""), "the log says why")
        // Approved here: the same run goes through.
        _ = try Self.approveAtDevice(r, command: "touch")
        let ok = try r.run(["command": cmd, "approved": true, "systemRunPlan": plan])
        #expect(ok["payload"]?["success"] == true, "\(ok)")
        #expect(FileManager.default.fileExists(atPath: r.work + "/made"))
        // Ids are not guessable short prefixes, and an unknown one is refused.
        let bad = try r.node.cli(["approvals", "approve", "abc"])
        #expect(bad.code == 1 && bad.stderr.contains("no plan waiting has id abc"), "\(bad.stderr)")
    }

    @Test func theGatewayCannotWriteAnAllowlistThatAllowsEverything() throws {
        let r = try Rig(); defer { r.stop() }
        // "~/../../**" is "/**" for a home such as /home/pi; this one climbs as far from wherever the test's home is.
        let upToRoot = "~/" + String(repeating: "../", count: r.node.dir.split(separator: "/").count) + "**"
        for pattern in ["**", "/**", "/**/*", upToRoot, "~/../../../../../../../../../../**", "/*", "/*/**", "*", "/usr/../**", "/./**"] {
            let res = try Self.setPolicy(r, ["security": "allowlist"], allowlist: [["pattern": .string(pattern)]])
            #expect(res["error"]?["code"] == "INVALID_REQUEST" && Self.message(res).contains("would allow every program"), "\(pattern): \(res)")
        }
        // Specific entries are stored canonical: /bin/echo is /usr/bin/echo on a merged-/usr system.
        let ok = try Self.setPolicy(r, ["security": "allowlist"], allowlist: [["pattern": "/bin/echo"], ["pattern": "~/bin/*"]])
        let stored = ok["payload"]?["file"]?["agents"]?["main"]?["allowlist"]?.arrayValue?.compactMap { $0["pattern"]?.stringValue } ?? []
        #expect(stored == [PathName.resolvingSymlinks("/bin/echo"), r.node.dir + "/bin/*"], "\(ok)")
        #expect(try r.run(["command": Self.argv("/bin/echo", "hi")])["payload"]?["stdout"] == "hi\n")
        // The local CLI goes through the same check.
        let cli = try r.node.cli(["approvals", "allow", "/**"])
        #expect(cli.code == 1 && cli.stderr.contains("would allow every program"), "\(cli.stderr)")
        // An entry that allows everything, written into the database behind the node's back, does not count, and doctor says so.
        let script = """
            import json, sqlite3, sys
            db = sqlite3.connect(sys.argv[1])
            body = json.loads(db.execute("SELECT body FROM capability_documents WHERE capability='system' AND name='exec-approvals'").fetchone()[0])
            body["agents"]["main"]["allowlist"].append({"id": "planted", "pattern": "/**"})
            db.execute("UPDATE capability_documents SET body=? WHERE capability='system' AND name='exec-approvals'", (json.dumps(body, indent=2) + "\\n",))
            db.commit()
            """
        let planted = try runProcess("/usr/bin/python3", ["-c", script, r.node.dir + "/state/state.db"])
        #expect(planted.code == 0, "\(planted.stderr)")
        #expect(Self.message(try r.run(["command": Self.argv("id")])) == "SYSTEM_RUN_DENIED: allowlist miss")
        let doctor = try r.node.cli(["doctor"]).stdout
        #expect(doctor.contains("effective exec policy (agent main): security allowlist") && doctor.contains("allowlist entries are ignored"), "\(doctor)")
    }

    @Test func theAllowlistCeilingBoundsWhatTheGatewayAdds() throws {
        let r = try Rig(system: "allowlistCeiling: ['/usr/bin/*']"); defer { r.stop() }
        for pattern in ["/usr/local/bin/tool", "/usr/bin/**", "/usr/**", "/opt/x/*", "/usr/bin/../sbin/*", "python*"] {
            let res = try Self.setPolicy(r, ["security": "allowlist"], allowlist: [["pattern": .string(pattern)]])
            #expect(Self.message(res).contains("is not inside capabilities.system.allowlistCeiling"), "\(pattern): \(res)")
        }
        // Inside the ceiling, but covering a shell, an interpreter or a program runner without an
        // argument pattern: that is every program (python3 -c, sh -c, env, xargs …).
        for pattern in ["/usr/bin/*", "/usr/bin/?*", "/usr/bin/py*", "/usr/bin/python3", "/usr/bin/e*", "/usr/bin/env",
                        "/usr/bin/xargs", "/bin/sh", "/usr/bin/perl", "/usr/bin/find"] {
            let res = try Self.setPolicy(r, ["security": "allowlist"], allowlist: [["pattern": .string(pattern)]])
            #expect(Self.message(res).contains("which runs whatever code or program it is given"), "\(pattern): \(res)")
        }
        // The legitimate forms: named programs, and an interpreter bound to the arguments meant.
        let ok = try Self.setPolicy(r, ["security": "allowlist"], allowlist: [["pattern": "/usr/bin/git"], ["pattern": "/usr/bin/ec*"], ["pattern": "uname"],
                                                                           ["pattern": "/usr/bin/python3", "argPattern": "^--version$"]])
        #expect(ok["ok"] == true, "\(ok)")
        #expect(try r.run(["command": Self.argv("echo", "in")])["payload"]?["stdout"] == "in\n")
        #expect(try r.run(["command": Self.argv("uname")])["payload"]?["success"] == true)
        #expect(try r.run(["command": Self.argv("/usr/bin/python3", "--version")])["payload"]?["success"] == true)
        #expect(Self.message(try r.run(["command": Self.argv("/usr/bin/python3", "-c", "print(1)")])) == "SYSTEM_RUN_DENIED: allowlist miss")
        let doctor = try r.node.cli(["doctor"]).stdout
        #expect(doctor.contains("allowlist ceiling: /usr/bin/*"), "\(doctor)")
        #expect(doctor.contains("allowlistCeiling \"/usr/bin/*\" covers"), "the ceiling's reach is named: \(doctor)")
    }

    // MARK: 11. nothing outlives a kill

    @Test func aTimeoutKillsDescendantsThatLeftTheGroup() throws {
        let r = try Rig(); defer { r.stop() }
        let pidFile = r.work + "/escaped.pid"
        let res = try r.run(["command": Self.argv("/bin/sh", "-c", "setsid sh -c 'echo $$ > \(pidFile); exec sleep 78' & sleep 60"), "timeoutMs": 800])
        #expect(res["payload"]?["timedOut"] == true, "\(res)")
        let pid = try #require(Int32(((try? String(contentsOfFile: pidFile, encoding: .utf8)) ?? "").trimmed()))
        #expect(waitUntil(timeout: 5) { kill(pid, 0) != 0 }, "the setsid grandchild \(pid) survived the timeout")
        // A double fork that daemonizes, then the daemon is killed: the run's tree goes with it.
        let pid2File = r.work + "/daemonized.pid"
        r.gw.command(["cmd": "invoke", "id": "long-2", "command": "system.run", "timeoutMs": 60_000,
                      "paramsJSON": .string((["command": Self.argv("/bin/sh", "-c", "(setsid sh -c 'echo $$ > \(pid2File); exec sleep 79' &) ; sleep 60")] as JSONValue).jsonString())])
        #expect(waitUntil(timeout: 10) { ((try? String(contentsOfFile: pid2File, encoding: .utf8)) ?? "").hasSuffix("\n") })
        let pid2 = try #require(Int32(((try? String(contentsOfFile: pid2File, encoding: .utf8)) ?? "").trimmed()))
        kill(r.node.process!.pid, SIGKILL)
        #expect(waitUntil(timeout: 5) { kill(pid2, 0) != 0 }, "the daemonized grandchild \(pid2) outlived the node")
    }
}
