import Glibc
import Support

/// Programs that run whatever code or program their arguments name: shells, language interpreters
/// and program runners (`env`, `xargs`, `sudo`, `find -exec` …). An allowlist entry — or the
/// gateway's entry inside a ceiling such as `/usr/bin/*` — that covers one of them without an
/// argument pattern allows every program, so it is treated like `**` (docs/SECURITY.md); and
/// `device.apps.launch` starts none of them, under any name (`sameProgram`).
public enum CodeRunners {
    /// Base names; a versioned name counts too (`python3.11`, `perl5.36.0`, `lua5.4`, `tclsh8.6`).
    public static let names: Set<String> = [
        // shells
        "sh", "bash", "dash", "zsh", "ksh", "ksh93", "mksh", "fish", "csh", "tcsh", "yash", "busybox", "rbash",
        // interpreters
        "python", "python2", "python3", "pypy", "pypy3", "perl", "ruby", "irb", "php", "lua", "luajit", "node", "nodejs",
        "deno", "bun", "tclsh", "wish", "expect", "Rscript", "R", "julia", "guile", "gawk", "awk", "mawk", "nawk", "jshell",
        "groovy", "scala", "pwsh", "osascript", "gdb", "vim", "vi", "nvim", "emacs", "ed",
        // program runners
        "env", "xargs", "nice", "ionice", "nohup", "timeout", "stdbuf", "setsid", "chrt", "taskset", "chroot", "sudo",
        "su", "doas", "pkexec", "runuser", "flock", "watch", "find", "strace", "ltrace", "script", "unshare", "nsenter",
        "systemd-run", "bwrap", "firejail", "parallel", "time", "exec", "eval", "command", "dbus-launch", "ssh-agent",
        "start-stop-daemon", "setpriv", "capsh", "faketime", "fakeroot", "proot", "xterm", "java", "valgrind",
        "ld-linux-x86-64.so", "ld-linux-aarch64.so", "ld-linux-armhf.so", "ld.so",
        // programs with a way to run a command (sed's e, tar --to-command, rsync -e, ssh, ex's !,
        // a multiplexer, sqlite3's .shell, m4's syscmd, a container runtime)
        "sed", "tar", "rsync", "ssh", "ex", "view", "tmux", "screen", "sqlite3", "m4", "docker", "podman", "xdg-open",
        // build and package tools: they run what their project files say (a Makefile's recipes,
        // package.json scripts, setup.py), which whoever can write the project chooses
        "make", "gmake", "npm", "npx", "yarn", "pnpm", "cargo", "pip", "pip3", "tox", "nox", "rake", "just", "cmake",
        "meson", "ninja", "gradle", "mvn", "ant", "composer", "bundle", "bundler", "go",
    ]

    /// Whether `name` is one of them, or one of them with a version after it.
    public static func isRunner(name: String) -> Bool {
        if names.contains(name) { return true }
        // A build for one architecture: Debian's perl5.36-x86_64-linux-gnu.
        if name.hasSuffix("-linux-gnu") {
            let stem = name.dropLast("-linux-gnu".count)
            if let arch = stem.lastIndex(of: "-"), isRunner(name: String(stem[..<arch])) { return true }
        }
        guard let i = name.firstIndex(where: { $0.isNumber }), i != name.startIndex else { return false }
        let base = String(name[..<i]), rest = name[i...]
        return names.contains(base) && rest.allSatisfy { $0.isNumber || $0 == "." || $0 == "-" }
    }

    /// The runners installed here (each as found and as its real path), in the directories of
    /// `path` and the standard ones. Read at most once every 30 s: a directory listing per entry
    /// of every approvals write would be wasted work.
    public static func installed(path: String?) -> [String] {
        let dirs = Set((path ?? "").split(separator: ":").map(String.init)
                       + ["/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"])
        let key = dirs.sorted().joined(separator: ":")
        let now = ContinuousClock.now
        if let hit = cache.withLock({ c in c.key == key && now - c.at < .seconds(30) ? c.paths : nil }) { return hit }
        var found: Set<String> = []
        for dir in dirs where dir.hasPrefix("/") {
            for name in (try? FileSystem.contentsOfDirectory(dir)) ?? [] where isRunner(name: name) {
                let full = PathName.join(dir, name)
                guard access(full, X_OK) == 0 else { continue }
                found.insert(full)
                found.insert(PathName.resolvingSymlinks(full))
            }
        }
        let paths = found.sorted()
        cache.withLock { $0 = (key, now, paths) }
        return paths
    }

    private static let cache = Locked<(key: String, at: ContinuousClock.Instant, paths: [String])>(("", .now - .seconds(60), []))

    /// The installed runner `path` is, whatever it is called: the same file (a hard or symbolic
    /// link), or a copy of one (same size and SHA-256) — a renamed shell is still a shell.
    public static func sameProgram(as path: String, searchPath: String?) -> String? {
        var st = stat()
        guard stat(path, &st) == 0 else { return nil }
        var digest: [UInt8]?
        for runner in installed(path: searchPath) {
            var r = stat()
            guard stat(runner, &r) == 0, r.st_mode & S_IFMT == S_IFREG else { continue }
            if r.st_dev == st.st_dev && r.st_ino == st.st_ino { return runner }
            guard r.st_size == st.st_size else { continue }
            if digest == nil { digest = FileSystem.readBytes(path).map { SHA256.hash($0) } }
            if let d = digest, FileSystem.readBytes(runner).map({ SHA256.hash($0) }) == d { return runner }
        }
        return nil
    }
}
