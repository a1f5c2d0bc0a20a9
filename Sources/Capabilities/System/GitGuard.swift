import Glibc
import Support

/// git reads configuration that names programs to run (core.fsmonitor on `git status`,
/// diff.external and textconv drivers on `git diff`/`log -p`, filters, ssh and credential helpers…),
/// and some of its options write files (`git log --output=.git/config`). Together an allowlisted
/// `git log` could write the config that makes the next allowlisted `git status` run anything —
/// no argument pattern can know every option. So when git runs because the allowlist let it:
/// its options that write a file or name a program are refused, and it runs only when no config
/// file its account can write (repository, worktree, ~/.gitconfig, included files) names a program.
/// Root's /etc/gitconfig is the administrator's and counts as trusted. docs/SECURITY.md.
enum GitGuard {
    /// Long options (before `--`) that write a file or run a program the arguments name. git takes
    /// any unambiguous prefix of a long option (`--open=cmd` is `--open-files-in-pager=cmd`), so a
    /// prefix of one of these is refused too.
    static let refusedLongOptions = ["--output", "--output-directory", "--open-files-in-pager", "--exec-path", "--upload-pack",
                                     "--receive-pack", "--exec", "--ext-diff", "--textconv", "--config-env", "--extcmd", "--tool",
                                     "--template", "--to-command", "--command", "--filter"]
    /// Short options that write a file or run a program, by subcommand: grep's `-O` opens files in
    /// a pager program, format-patch's and archive's `-o` write, clone's `-u` names the upload-pack
    /// program. Also inside clusters (`-nOcmd`). (`-c key=value` is judged by its key: below.)
    static let refusedShortOptions: [String: Set<Character>] = ["grep": ["O"], "format-patch": ["o"], "archive": ["o"], "clone": ["u"]]
    /// Subcommands that run programs by design (a bisect script, a submodule foreach, a diff or
    /// merge tool, filters, rebase's -x, an editor, a mail or web program, remote helpers).
    static let refusedSubcommands: Set<String> = ["filter-branch", "filter-repo", "difftool", "mergetool", "bisect", "submodule", "rebase",
                                                  "daemon", "instaweb", "web--browse", "send-email", "imap-send", "credential", "upload-pack",
                                                  "receive-pack", "upload-archive", "shell", "archimport", "cvsimport", "cvsserver", "svn", "p4",
                                                  "quiltimport", "help", "sh-setup", "remote-ext", "remote-fd"]

    /// Whether `executable` is git: by name (`git`, a `git-*` program of git-core) or by being the
    /// same file as the git on PATH (a link of another name).
    static func isGit(_ executable: String, path: String?) -> Bool {
        let name = PathName.lastComponent(PathName.resolvingSymlinks(executable))
        if name == "git" || PathName.lastComponent(executable) == "git" || name.hasPrefix("git-") || PathName.lastComponent(executable).hasPrefix("git-") { return true }
        guard let git = ExecutableResolver.resolve("git", path: path, cwd: nil) else { return false }
        var a = stat(), b = stat()
        return stat(executable, &a) == 0 && stat(git, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino
    }

    /// git's own options before the subcommand that take a value.
    static let valuedGlobals: Set<String> = ["-C", "-c", "--git-dir", "--work-tree", "--namespace", "--super-prefix", "--config-env"]

    /// git's own options (before the subcommand) and the subcommand (`git -C x log` → log;
    /// `git-grep …` → grep, no options of git's own).
    static func split(_ argv: [String]) -> (globals: [String], subcommand: String?) {
        let name = PathName.lastComponent(argv[0])
        if name.hasPrefix("git-") { return ([], String(name.dropFirst(4))) }
        var globals: [String] = []
        var args = argv.dropFirst()[...]
        while let arg = args.popFirst() {
            if valuedGlobals.contains(arg) { globals += [arg] + (args.popFirst().map { [$0] } ?? []); continue }
            if arg.hasPrefix("-") { globals.append(arg); continue }
            return (globals, arg)
        }
        return (globals, nil)
    }

    static func subcommand(_ argv: [String]) -> String? { split(argv).subcommand }

    /// Why these arguments are refused for an allowlisted git (nil: fine).
    static func argumentRefusal(_ argv: [String]) -> String? {
        let sub = subcommand(argv)
        if let sub, refusedSubcommands.contains(sub) {
            return "SYSTEM_RUN_DENIED: git \(sub) runs programs by design; an allowlisted git does not run it (an approval does)"
        }
        let short = sub.flatMap { refusedShortOptions[$0] } ?? []
        var args = argv.dropFirst()[...]
        // Before the subcommand `-c` is git's own (configuration); after it, the subcommand's.
        var global = !PathName.lastComponent(argv[0]).hasPrefix("git-")
        while let arg = args.popFirst() {
            if arg == "--" { break }
            if global && !arg.hasPrefix("-") { global = false; continue }
            if global && ["-C", "--git-dir", "--work-tree", "--namespace", "--super-prefix"].contains(arg) { _ = args.popFirst(); continue }
            // Configuration on the command line: fine unless it names a program (as in a file).
            if global && arg.hasPrefix("-c") && !arg.hasPrefix("--") {
                let setting = arg == "-c" ? (args.popFirst() ?? "") : String(arg.dropFirst(2))
                let parts = setting.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                if namesProgram(key: String(parts[0]), value: parts.count > 1 ? String(parts[1]) : "") {
                    return "SYSTEM_RUN_DENIED: git -c \(parts[0]) names a program; an allowlisted git does not take it (an approval does)"
                }
                continue
            }
            if arg.hasPrefix("--") {
                let name = String(arg.split(separator: "=", maxSplits: 1).first ?? "")
                guard name.count > 3 else { continue }
                if let option = refusedLongOptions.first(where: { $0.hasPrefix(name) }) {
                    return "SYSTEM_RUN_DENIED: git \(option) writes a file or runs a program; an allowlisted git does not take it (an approval does)"
                }
            } else if arg.hasPrefix("-"), arg.count > 1 {
                // A cluster of short options; a value may follow its first value-taking letter, so
                // every letter is looked at (conservative: `-nOcmd` is -n -O cmd).
                if let hit = arg.dropFirst().first(where: { short.contains($0) }) {
                    return "SYSTEM_RUN_DENIED: git -\(hit) writes a file, sets configuration or runs a program; an allowlisted git does not take it (an approval does)"
                }
            }
        }
        return nil
    }

    /// What an allowlisted git runs with on top of its configuration, as command-line configuration
    /// (which outranks every file): no hooks, no fsmonitor — so a hook written by an allowed command
    /// (`git checkout-index --prefix=.git/hooks/`) never runs.
    static func environment(_ env: [String: String]) -> [String: String] {
        var out = env
        let n = Int(env["GIT_CONFIG_COUNT"] ?? "") ?? 0
        for (i, (k, v)) in [("core.hooksPath", "/dev/null"), ("core.fsmonitor", "false")].enumerated() {
            out["GIT_CONFIG_KEY_\(n + i)"] = k
            out["GIT_CONFIG_VALUE_\(n + i)"] = v
        }
        out["GIT_CONFIG_COUNT"] = String(n + 2)
        return out
    }

    /// Keys (lower-cased, `section.key` or `section.<sub>.key` with `*` for the subsection) whose
    /// value is a program git may run.
    static let programKeys: Set<String> = [
        "core.fsmonitor", "core.sshcommand", "core.gitproxy", "core.askpass", "core.editor", "core.pager", "core.hookspath",
        "core.alternaterefscommand", "sequence.editor", "diff.external", "diff.*.command", "diff.*.textconv",
        "filter.*.clean", "filter.*.smudge", "filter.*.process", "merge.*.driver", "gpg.program", "gpg.*.program",
        "credential.helper", "credential.*.helper", "uploadpack.packobjectshook", "remote.*.uploadpack", "remote.*.receivepack",
        "web.browser", "browser.*.cmd", "browser.*.path", "pager.*", "alias.*", "interactive.difffilter", "sendemail.smtpserver",
        "protocol.allow", "protocol.*.allow", "url.*.insteadof", "url.*.pushinsteadof",
    ]

    /// Whether `key = value` makes git run a program (values that are plainly not one are fine).
    static func namesProgram(key: String, value: String) -> Bool {
        let k = key.lowercased()
        let parts = k.split(separator: ".", omittingEmptySubsequences: false)
        let shape = parts.count > 2 ? "\(parts[0]).*.\(parts[parts.count - 1])" : k
        let general = parts.count >= 2 ? "\(parts[0]).*" : k
        guard programKeys.contains(k) || programKeys.contains(shape) || programKeys.contains(general) else { return false }
        let v = value.lowercased()
        let boolean = ["", "true", "false", "yes", "no", "on", "off", "1", "0"].contains(v)
        switch shape {
        case "core.fsmonitor", "pager.*": return !boolean                 // true/false: git's own
        case "core.hookspath": return value != "/dev/null"
        case "protocol.allow", "protocol.*.allow": return v == "always" && (k == "protocol.allow" || k == "protocol.ext.allow")
        case "url.*.insteadof", "url.*.pushinsteadof": return parts.count > 2 && parts[1...].dropLast().joined(separator: ".").hasPrefix("ext::")
        case "sendemail.smtpserver": return value.hasPrefix("/")
        default: break
        }
        if general == "alias.*" && parts.count == 2 { return value.hasPrefix("!") }
        if general == "pager.*" && parts.count == 2 { return !boolean }
        return true
    }

    /// Why git may not run here: a config file the node's account can write names a program.
    /// `globals` are git's options before the subcommand (`-C dir`, `--git-dir`), so the same
    /// repository is read. Reading config runs nothing.
    static func configRefusal(git: String, globals: [String], cwd: String?, env: [String: String]) -> String? {
        guard let out = listConfig(git: git, globals: globals, cwd: cwd, env: env) else {
            return "SYSTEM_RUN_DENIED: git: cannot read the repository's configuration (within 5 s, 64 KiB)"
        }
        // -z: "<origin>\0<key>\n<value>\0" per entry.
        var fields = out.split(separator: 0, omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }[...]
        while let origin = fields.popFirst(), let entry = fields.popFirst() {
            let key = entry.split(separator: "\n", maxSplits: 1).first.map(String.init) ?? entry
            let value = entry.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false).dropFirst().first.map(String.init) ?? ""
            guard namesProgram(key: key, value: value), !trusted(origin: origin, cwd: cwd) else { continue }
            let file = origin.hasPrefix("file:") ? String(origin.dropFirst(5)) : origin
            return "SYSTEM_RUN_DENIED: git: \(file) sets \(key), which makes git run a program, in a file this account can write; " +
                "an allowlisted git runs only where its configuration runs nothing (remove the key, keep it in /etc/gitconfig, or approve the run)"
        }
        return nil
    }

    /// `git config --list` as bytes; nil when it fails, or takes over 5 s (an include of a FIFO
    /// blocks), or says over 64 KiB (the pipe's size: it is read after the exit).
    private static func listConfig(git: String, globals: [String], cwd: String?, env: [String: String]) -> [UInt8]? {
        guard let child = try? Subprocess.spawn(git, globals + ["config", "--list", "--show-origin", "--includes", "-z"],
                                                environment: env, stdin: .null, stdout: .pipe, stderr: .null,
                                                workingDirectory: cwd) else { return nil }
        guard child.waitForExit(within: .seconds(5)) else { _ = child.terminate(grace: .milliseconds(100)); return nil }
        let out = child.stdout?.readDataToEndOfFile() ?? []
        // Exit 1: no configuration at all, which names no program either.
        let status = child.wait()
        return status == 0 || (status == 1 && out.isEmpty) ? out : nil
    }

    /// Root's own files that nobody else may write: the administrator's configuration.
    private static func trusted(origin: String, cwd: String?) -> Bool {
        guard origin.hasPrefix("file:") else { return origin.hasPrefix("command line:") }
        // A relative origin is relative to wherever git ended up (-C …): never taken as trusted.
        let path = String(origin.dropFirst(5))
        guard path.hasPrefix("/") else { return false }
        var st = stat()
        guard stat(path, &st) == 0 else { return false }
        // (A node run as root could write these too; doctor already warns against running so.)
        return st.st_uid == 0 && st.st_mode & 0o022 == 0 && !path.hasPrefix(PathName.home(ProcessEnvironment.current) + "/")
    }

    /// git's options before its subcommand that choose the repository (for reading its config).
    static func globals(_ argv: [String]) -> [String] {
        var out: [String] = []
        var given = split(argv).globals[...]
        while let arg = given.popFirst() {
            if ["-C", "--git-dir", "--work-tree", "--namespace"].contains(arg), let v = given.popFirst() { out += [arg, v]; continue }
            if valuedGlobals.contains(arg) { _ = given.popFirst(); continue }
            if arg.hasPrefix("--git-dir=") || arg.hasPrefix("--work-tree=") || arg.hasPrefix("--namespace=") || arg == "--bare" { out.append(arg) }
        }
        return out
    }
}
