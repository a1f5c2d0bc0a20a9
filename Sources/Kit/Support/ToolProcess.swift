import Glibc

/// Runs a helper program to completion (the file commands' `file` and `tar`, the camera's
/// `rpicam-still`): its stdout captured up to a cap, optionally bytes fed to its stdin at the same
/// time, its stderr kept (the last 4 KiB) when asked, stopped — its whole process group — at the
/// timeout, at the cap, or when the invoke is cancelled: SIGINT first when `interruptGrace` is set
/// (rpicam-vid finishes its file on SIGINT), SIGKILL after it.
public struct ToolProcess: Sendable {
    public struct Outcome: Sendable {
        public var status: Int32?
        public var stdout: [UInt8] = []
        /// The end of what it wrote on stderr (with `keepStderr`).
        public var stderr = ""
        public var timedOut = false
        public var overCap = false
        public var cancelled = false
        public var error: String?
        public var succeeded: Bool { status == 0 && !timedOut && !overCap && !cancelled && error == nil }
    }

    public let executable: String
    public let arguments: [String]
    public var stdin: [UInt8]? = nil
    /// Descriptors the child gets at these numbers (a directory it works in as /proc/self/fd/3).
    public var extraFDs: [Int32: Int32] = [:]
    public var outputCap = Int.max
    public let timeout: Duration
    /// The child's environment (default: PATH=/usr/bin:/bin, LC_ALL=C).
    public var environment: [String: String] = ["PATH": "/usr/bin:/bin", "LC_ALL": "C"]
    public var keepStderr = false
    /// Stop with SIGINT and wait this long before SIGKILL (nil: SIGKILL at once).
    public var interruptGrace: Duration?

    public init(executable: String, arguments: [String], stdin: [UInt8]? = nil, extraFDs: [Int32: Int32] = [:],
                outputCap: Int = .max, timeout: Duration) {
        self.executable = executable; self.arguments = arguments; self.stdin = stdin; self.extraFDs = extraFDs
        self.outputCap = outputCap; self.timeout = timeout
    }

    /// `executable` by name on the daemon's PATH, else in /usr/bin or /bin.
    public static func find(_ name: String) -> String? {
        Subprocess.findExecutable(name) ?? Subprocess.findExecutable(name, path: "/usr/bin:/bin")
    }

    public func run() async -> Outcome {
        let job = self
        return await BlockingExecutor.run("tool-\(PathName.lastComponent(executable))") { (flag: CancelFlag) -> Outcome in job.runBlocking(flag) }
    }

    /// On the calling thread (one that may block), cancelled through `flag`.
    public func runBlocking(_ flag: CancelFlag) -> Outcome {
        var outcome = Outcome()
        let child: Subprocess
        do {
            child = try Subprocess.spawn(executable, arguments, environment: environment,
                                         stdin: stdin == nil ? .null : .pipe, stdout: .pipe, stderr: keepStderr ? .pipe : .null,
                                         newProcessGroup: true, extraFDs: extraFDs)
        } catch {
            outcome.error = error.description
            return outcome
        }
        guard let out = child.stdout else { outcome.error = "no pipe"; return outcome }
        let input = stdin ?? []
        var written = 0
        var inFD: Int32 = -1
        if let pipe = child.stdin {
            inFD = pipe.fileDescriptor
            _ = fcntl(inFD, F_SETFL, fcntl(inFD, F_GETFL) | O_NONBLOCK)
            if input.isEmpty { child.stdin?.close(); inFD = -1 }
        }
        let started = ContinuousClock.now
        var buf = [UInt8](repeating: 0, count: 65536)
        var open = true
        var errFD = child.stderr?.fileDescriptor ?? -1
        var errText: [UInt8] = []
        while open {
            if flag.isCancelled { outcome.cancelled = true }
            if ContinuousClock.now - started >= timeout { outcome.timedOut = true }
            if outcome.cancelled || outcome.timedOut || outcome.overCap { stop(child); break }
            var fds = [pollfd(fd: out.fileDescriptor, events: Int16(POLLIN), revents: 0)]
            if inFD >= 0 { fds.append(pollfd(fd: inFD, events: Int16(POLLOUT), revents: 0)) }
            if errFD >= 0 { fds.append(pollfd(fd: errFD, events: Int16(POLLIN), revents: 0)) }
            let left = timeout - (ContinuousClock.now - started)
            if poll(&fds, nfds_t(fds.count), Int32(max(1, min(100, left.milliseconds)))) < 0 && errno != EINTR { break }
            if errFD >= 0, fds[fds.count - 1].revents != 0 {
                let n = read(errFD, &buf, buf.count)
                if n > 0 { errText += buf[0..<n]; if errText.count > 4096 { errText.removeFirst(errText.count - 4096) } }
                else if n == 0 || (errno != EINTR && errno != EAGAIN) { errFD = -1 }
            }
            if inFD >= 0, fds[1].revents != 0 {
                let n = input.withUnsafeBytes { write(inFD, $0.baseAddress! + written, min(65536, input.count - written)) }
                if n > 0 { written += n }
                if (n < 0 && errno != EAGAIN && errno != EINTR) || written == input.count { child.stdin?.close(); inFD = -1 }
            }
            if fds[0].revents != 0 {
                let n = read(out.fileDescriptor, &buf, buf.count)
                if n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN) { open = false; continue }
                if n > 0 {
                    if outcome.stdout.count + n > outputCap { outcome.overCap = true; continue }
                    outcome.stdout += buf[0..<n]
                }
            }
        }
        child.stdin?.close()
        out.close()
        // What is left on stderr once it exited (a message written just before).
        if errFD >= 0 {
            _ = child.waitForExit(within: .seconds(2))
            _ = fcntl(errFD, F_SETFL, fcntl(errFD, F_GETFL) | O_NONBLOCK)
            while true { let n = read(errFD, &buf, buf.count); if n <= 0 { break }; errText += buf[0..<n] }
        }
        child.stderr?.close()
        let status = child.wait()
        outcome.status = (outcome.timedOut || outcome.overCap || outcome.cancelled) ? nil : status
        outcome.stderr = String(decoding: errText.suffix(4096), as: UTF8.self)
        return outcome
    }

    /// The whole process group: SIGINT and a grace period when asked, then SIGKILL.
    private func stop(_ child: Subprocess) {
        if let grace = interruptGrace {
            kill(-child.pid, SIGINT)
            if child.waitForExit(within: grace) { kill(-child.pid, SIGKILL); return }
        }
        kill(-child.pid, SIGKILL)
    }
}
