import CProcessControl
import Glibc

/// Runs one command so that nothing it starts can outlive a kill: a small helper process (the
/// node's own executable, `openclaw-node exec-reaper -- <program> <args…>`) marks itself a child
/// subreaper, starts the program and waits. Every descendant that is orphaned — a `setsid`
/// grandchild, a double-forked daemon — is re-parented to the helper instead of init, so the
/// helper's process tree is always the whole run. On SIGTERM (the node's timeout or cancel), or
/// when the node itself dies (parent-death signal), it SIGKILLs that tree and reaps it before
/// exiting. A process group alone cannot do this: `setsid` leaves the group.
public enum ProcessTreeReaper {
    /// The hidden subcommand of the openclaw-node executable that runs the helper.
    public static let subcommand = "exec-reaper"

    /// The executable that runs the helper: this process's own when it is openclaw-node, else the
    /// openclaw-node beside it (a test runner in the build directory). nil: none found.
    public static var helperExecutable: String? { NodeExecutable.path }

    /// The argv that runs `executable` with `arguments` under the helper (nil: no helper found).
    /// `killOrphans`: when the program itself exits, what it left running goes too (an MCP server's
    /// `setsid` child must not outlive the server, nor the node). system.run leaves a command's
    /// background processes alone when it exits normally, as a shell does.
    public static func wrap(_ executable: String, _ arguments: [String], killOrphans: Bool = false) -> (executable: String, arguments: [String])? {
        guard let helper = helperExecutable else { return nil }
        return (helper, [subcommand] + (killOrphans ? [killOrphansFlag] : []) + ["--", executable] + arguments)
    }

    static let killOrphansFlag = "--kill-orphans"

    /// The helper's main: `args` is `-- <program> <args…>`. Exits with the program's status
    /// (128+signal when a signal ended it), or 137 after killing the tree on request.
    public static func main(_ args: [String]) -> Int32 {
        var argv = args
        let killOrphans = argv.first == killOrphansFlag
        if killOrphans { argv.removeFirst() }
        if argv.first == "--" { argv.removeFirst() }
        guard let program = argv.first else {
            say("usage: openclaw-node exec-reaper -- PROGRAM [ARGS…] (run by bundles for the commands they start)")
            return 2
        }
        var stops = sigset_t()
        sigemptyset(&stops)
        for s in [SIGTERM, SIGINT, SIGHUP, SIGCHLD] { sigaddset(&stops, s) }
        // Blocked before anything can arrive; the program is started with an empty mask (Subprocess).
        pthread_sigmask(SIG_BLOCK, &stops, nil)
        guard ocn_set_child_subreaper() == 0 else {
            say("cannot become a child subreaper: \(String(cString: strerror(errno)))")
            return 126
        }
        _ = ocn_set_parent_death_signal(SIGTERM)
        if getppid() == 1 { return killTree() }  // the node died before the signal was armed
        let child: Subprocess
        // Its standard input is the helper's (an MCP server's stdio pipe; /dev/null for system.run).
        do { child = try Subprocess.spawn(program, Array(argv.dropFirst()), environment: ProcessEnvironment.current, stdin: .inherit) }
        catch {
            say(error.description)
            return 127
        }
        while true {
            var sig: Int32 = 0
            guard sigwait(&stops, &sig) == 0 else { continue }
            if sig == SIGCHLD {
                // Reap whatever ended: the program, or an orphan re-parented to us.
                var status: Int32 = 0
                while true {
                    let pid = waitpid(-1, &status, WNOHANG)
                    if pid <= 0 { break }
                    if pid == child.pid {
                        // Orphans left running in the background are the program's business, as
                        // with a shell (re-parented onwards when the helper exits) — unless asked.
                        let sig = status & 0x7f
                        if killOrphans { _ = killTree() }
                        return sig == 0 ? (status >> 8) & 0xff : 128 + sig
                    }
                }
            } else {
                // A server (killOrphans) gets its SIGTERM and up to 3 s to end as a server should;
                // then, or at once for a command, the whole tree is killed.
                if killOrphans { graceful(child.pid) }
                return killTree()
            }
        }
    }

    /// SIGTERM to `pid`, then waits (SIGCHLD, which `main` blocks) up to 3 s for it to end.
    private static func graceful(_ pid: pid_t) {
        kill(pid, SIGTERM)
        var chld = sigset_t()
        sigemptyset(&chld)
        sigaddset(&chld, SIGCHLD)
        let deadline = ContinuousClock.now + .seconds(3)
        while ContinuousClock.now < deadline {
            var status: Int32 = 0
            if waitpid(pid, &status, WNOHANG) == pid { return }
            var wait = timespec(tv_sec: 0, tv_nsec: 100_000_000)
            _ = sigtimedwait(&chld, nil, &wait)
        }
    }

    /// A line on standard error (the run's stderr, which the caller captures).
    private static func say(_ text: String) {
        let line = Array("openclaw-node exec-reaper: \(text)\n".utf8)
        _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    }

    /// SIGKILLs every descendant until none is left, reaping them; 137 (killed). Called with
    /// SIGCHLD blocked (by `main`), so between rounds it waits for the next SIGCHLD (a killed
    /// child's exit) instead of sleeping; the 100 ms bound only covers a descendant forked after
    /// the round listed /proc, which no exit announces.
    static func killTree() -> Int32 {
        let me = getpid()
        let deadline = ContinuousClock.now + .seconds(5)
        var chld = sigset_t()
        sigemptyset(&chld)
        sigaddset(&chld, SIGCHLD)
        while ContinuousClock.now < deadline {
            for pid in descendants(of: me) { kill(pid, SIGKILL) }
            var status: Int32 = 0
            while waitpid(-1, &status, WNOHANG) > 0 {}
            if waitpid(-1, &status, WNOHANG) < 0 && errno == ECHILD { break }
            var wait = timespec(tv_sec: 0, tv_nsec: 100_000_000)
            _ = sigtimedwait(&chld, nil, &wait)
        }
        return 137
    }

    /// Every live descendant of `root`, from the parent links in /proc/<pid>/stat.
    public static func descendants(of root: pid_t) -> [pid_t] {
        var children: [pid_t: [pid_t]] = [:]
        for name in (try? FileSystem.contentsOfDirectory("/proc")) ?? [] {
            guard let pid = pid_t(name), let stat = FileSystem.readText("/proc/\(name)/stat"),
                  let close = stat.lastIndex(of: ")") else { continue }
            // After "pid (comm)": state, ppid, … (comm may contain spaces and parentheses).
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            guard fields.count > 1, fields[0] != "Z", let ppid = pid_t(fields[1]) else { continue }
            children[ppid, default: []].append(pid)
        }
        var out: [pid_t] = []
        var queue = children[root] ?? []
        while let pid = queue.popLast() {
            out.append(pid)
            queue += children[pid] ?? []
        }
        return out
    }
}
