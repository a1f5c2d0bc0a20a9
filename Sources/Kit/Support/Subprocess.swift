import CProcessControl
import Glibc

/// A child process started with posix_spawn and a clean signal state. Foundation's Process passes on
/// the spawning thread's blocked-signal mask (and ignored signals survive exec), which leaves a
/// child that cannot be stopped with SIGTERM; every process the node (or a test) starts goes through
/// here instead. The owner stops it by PID.
public final class Subprocess: Sendable {
    public enum Stream: Sendable {
        case inherit
        case null
        case pipe
        /// Append to this file (created 0600 if missing).
        case file(String)
    }

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    public let pid: pid_t
    public let executable: String
    /// Our ends of `.pipe` streams (nil otherwise).
    public let stdin: PipeEnd?
    public let stdout: PipeEnd?
    public let stderr: PipeEnd?
    /// Set once the child is reaped; the lock also keeps two threads from reaping it at once.
    private let exitStatus = Locked<Int32?>(nil)

    public static func spawn(_ executable: String, _ arguments: [String], environment: [String: String]? = nil,
                             stdin: Stream = .null, stdout: Stream = .inherit, stderr: Stream = .inherit,
                             newProcessGroup: Bool = false, extraFDs: [Int32: Int32] = [:],
                             workingDirectory: String? = nil) throws(Failure) -> Subprocess {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if let dir = workingDirectory {
            // The child's chdir, so a missing directory fails the spawn (ENOENT) instead of
            // running the command somewhere else.
            guard let addchdir = Subprocess.addchdir else { throw Failure(description: "this C library cannot set a child's working directory") }
            let rc = addchdir(&actions, dir)
            guard rc == 0 else { throw Failure(description: "cwd \(dir): \(String(cString: strerror(rc)))") }
        }
        var closeAfter: [Int32] = []
        // extraFDs maps a child descriptor number (3, 4, …: Chromium's --remote-debugging-pipe) to
        // one of ours. Copies above 63 first, so a source that happens to be 3 or 4 is not
        // clobbered by another mapping; dup2 in the child clears close-on-exec on the target.
        for (target, source) in extraFDs.sorted(by: { $0.key < $1.key }) {
            let high = fcntl(source, F_DUPFD_CLOEXEC, 64)
            guard high >= 0 else { throw Failure(description: "dup: \(String(cString: strerror(errno)))") }
            closeAfter.append(high)
            posix_spawn_file_actions_adddup2(&actions, high, target)
        }
        var ours: [PipeEnd?] = [nil, nil, nil]
        for (target, stream) in [(Int32(0), stdin), (1, stdout), (2, stderr)] {
            switch stream {
            case .inherit:
                // Our stdout/stderr as a description of the child's own when it is a pipe or a
                // terminal: a child that makes its stderr non-blocking (Node.js does, at start)
                // would otherwise do it to ours too, and our writes would start failing with
                // EAGAIN whenever the reader lags: lost log lines, lost test output.
                if target > 0, let own = Subprocess.privateDescription(of: target) {
                    posix_spawn_file_actions_adddup2(&actions, own, target)
                    closeAfter.append(own)
                }
            case .null:
                posix_spawn_file_actions_addopen(&actions, target, "/dev/null", target == 0 ? O_RDONLY : O_WRONLY, 0)
            case .file(let path):
                posix_spawn_file_actions_addopen(&actions, target, path, O_WRONLY | O_CREAT | O_APPEND, 0o600)
            case .pipe:
                guard let p = makePipe() else { throw Failure(description: "pipe: \(String(cString: strerror(errno)))") }
                let (childEnd, ourEnd) = target == 0 ? (p.read, p.write) : (p.write, p.read)
                posix_spawn_file_actions_adddup2(&actions, childEnd, target)
                posix_spawn_file_actions_addclose(&actions, childEnd)
                closeAfter.append(childEnd)
                ours[Int(target)] = PipeEnd(fileDescriptor: ourEnd)
            }
        }
        var attr = posix_spawnattr_t()
        posix_spawnattr_init(&attr)
        defer { posix_spawnattr_destroy(&attr) }
        var empty = sigset_t(), all = sigset_t()
        sigemptyset(&empty)
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attr, &empty)
        posix_spawnattr_setsigdefault(&attr, &all)
        var flags = Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF)
        if newProcessGroup { flags |= Int16(POSIX_SPAWN_SETPGROUP); posix_spawnattr_setpgroup(&attr, 0) }
        posix_spawnattr_setflags(&attr, flags)

        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let env = (environment ?? ProcessEnvironment.current).map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { env.forEach { free($0) } }
        var pid: pid_t = 0
        let rc = spawning.withLock { _ in
            executable.contains("/")
                ? posix_spawn(&pid, executable, &actions, &attr, argv, env)
                : posix_spawnp(&pid, executable, &actions, &attr, argv, env)
        }
        closeAfter.forEach { _ = close($0) }
        guard rc == 0 else { throw Failure(description: "cannot start \(executable): \(String(cString: strerror(rc)))") }
        return Subprocess(pid: pid, executable: executable, stdin: ours[0], stdout: ours[1], stderr: ours[2])
    }

    /// Held while a pipe is created and marked close-on-exec, and while spawning: a child started
    /// from another thread in between would otherwise inherit both ends (Glibc's pipe2 is not
    /// visible to Swift without _GNU_SOURCE).
    /// (It guards a procedure, no value.)
    private static let spawning = Locked(())

    /// glibc's posix_spawn_file_actions_addchdir_np (2.29+) is declared only under _GNU_SOURCE,
    /// which Swift's Glibc module is built without; it is looked up by name instead.
    private typealias AddChdir = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>?, UnsafePointer<CChar>?) -> Int32
    private static let addchdir: AddChdir? = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addchdir_np")
        .map { unsafeBitCast($0, to: AddChdir.self) }

    /// Where `name` is on `path` (default: this process's $PATH), as execvp would find it: the
    /// first executable regular file. Relative PATH entries are skipped.
    public static func findExecutable(_ name: String, path: String? = nil) -> String? {
        for dir in (path ?? ProcessEnvironment.value("PATH") ?? "/usr/bin:/bin").split(separator: ":") where dir.hasPrefix("/") {
            let candidate = PathName.join(String(dir), name)
            if isExecutableFile(candidate) { return candidate }
        }
        return nil
    }

    /// A regular file this user may execute (directories have x bits too).
    public static func isExecutableFile(_ path: String) -> Bool {
        var st = stat()
        return stat(path, &st) == 0 && st.st_mode & S_IFMT == S_IFREG && access(path, X_OK) == 0
    }

    /// A new open file description of the pipe or terminal `fd` writes to (reopened through
    /// /proc/self/fd), whose status flags are its own; nil for anything else (a file shares its
    /// offset on purpose; a socket cannot be reopened) or when the pipe has no reader left.
    /// Close-on-exec.
    public static func privateDescription(of fd: Int32) -> Int32? {
        var st = stat()
        guard fstat(fd, &st) == 0 else { return nil }
        let type = st.st_mode & S_IFMT
        guard type == S_IFIFO || type == S_IFCHR else { return nil }
        if type == S_IFCHR && isatty(fd) == 0 { return nil }
        // O_NONBLOCK for the open itself: opening a FIFO for writing waits for a reader otherwise.
        let own = open("/proc/self/fd/\(fd)", O_WRONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)
        guard own >= 0 else { return nil }
        _ = fcntl(own, F_SETFL, fcntl(own, F_GETFL) & ~O_NONBLOCK)
        return own
    }

    /// A pipe whose ends are close-on-exec from the start (dup2 into a child clears the flag).
    public static func makePipe() -> (read: Int32, write: Int32)? {
        spawning.withLock { _ in
            var fds: [Int32] = [0, 0]
            guard pipe(&fds) == 0 else { return nil }
            _ = fcntl(fds[0], F_SETFD, FD_CLOEXEC)
            _ = fcntl(fds[1], F_SETFD, FD_CLOEXEC)
            return (fds[0], fds[1])
        }
    }

    private init(pid: pid_t, executable: String, stdin: PipeEnd?, stdout: PipeEnd?, stderr: PipeEnd?) {
        self.pid = pid; self.executable = executable; self.stdin = stdin; self.stdout = stdout; self.stderr = stderr
    }

    /// Exit code, or 128+signal for a child killed by a signal.
    private static func decode(_ status: Int32) -> Int32 {
        let sig = status & 0x7f
        return sig == 0 ? (status >> 8) & 0xff : 128 + sig
    }

    /// Reaps the child if it has exited; nil while it runs.
    public func poll() -> Int32? {
        exitStatus.withLock { exitStatus in
            if let s = exitStatus { return s }
            var status: Int32 = 0
            let r = waitpid(pid, &status, WNOHANG)
            if r == pid { exitStatus = Subprocess.decode(status) }
            else if r < 0 && errno == ECHILD { exitStatus = -1 }
            return exitStatus
        }
    }

    public var isRunning: Bool { poll() == nil }

    /// Blocks until the child exits (call off the cooperative pool).
    @discardableResult
    public func wait() -> Int32 {
        if let s = poll() { return s }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        exitStatus.withLock { if $0 == nil { $0 = Subprocess.decode(status) } }
        return poll() ?? -1
    }

    public func signal(_ sig: Int32) { if isRunning { kill(pid, sig) } }

    /// SIGTERM, then SIGKILL after `grace`; returns the exit code.
    @discardableResult
    public func terminate(grace: Duration = .seconds(5)) -> Int32 {
        signal(SIGTERM)
        if isRunning, !waitForExit(within: grace) { kill(pid, SIGKILL) }
        return wait()
    }

    /// Waits at most `timeout` for the child to exit, on a pidfd (one poll(2), woken by the exit);
    /// true when it did. Where the kernel has no pidfd_open, a short sleep loop stands in.
    public func waitForExit(within timeout: Duration) -> Bool {
        let deadline = ContinuousClock.now + timeout
        let fd = ocn_pidfd_open(pid)
        if fd >= 0 {
            defer { Glibc.close(fd) }
            while isRunning {
                let left = deadline - ContinuousClock.now
                guard left > .zero else { return false }
                var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                _ = Glibc.poll(&p, 1, Int32(max(1, min(left.milliseconds, 60_000))))
            }
            return true
        }
        // Kernels before 5.3 have no pidfd to wait on: the exit is looked for every 5 ms.
        while isRunning && ContinuousClock.now < deadline { Pause.for(.milliseconds(5)) }
        return !isRunning
    }
}
