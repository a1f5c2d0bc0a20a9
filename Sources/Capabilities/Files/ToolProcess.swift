import Glibc
import Support

/// Runs one of the small programs the file commands use (`file`, `tar`) to completion: its stdout
/// captured up to a cap, optionally bytes fed to its stdin at the same time, killed (its whole
/// process group) at the timeout, at the cap, or when the invoke is cancelled.
struct ToolProcess {
    struct Outcome: Sendable {
        var status: Int32?
        var stdout: [UInt8] = []
        var timedOut = false
        var overCap = false
        var cancelled = false
        var error: String?
        var succeeded: Bool { status == 0 && !timedOut && !overCap && !cancelled && error == nil }
    }

    let executable: String
    let arguments: [String]
    var stdin: [UInt8]? = nil
    /// Descriptors the child gets at these numbers (a directory it works in as /proc/self/fd/3).
    var extraFDs: [Int32: Int32] = [:]
    var outputCap = Int.max
    let timeout: Duration

    /// `executable` by name on the daemon's PATH, else in /usr/bin or /bin.
    static func find(_ name: String) -> String? {
        Subprocess.findExecutable(name) ?? Subprocess.findExecutable(name, path: "/usr/bin:/bin")
    }

    func run() async -> Outcome {
        let job = self
        return await BlockingExecutor.run("files-\(PathName.lastComponent(executable))") { (flag: CancelFlag) -> Outcome in job.runBlocking(flag) }
    }

    private func runBlocking(_ flag: CancelFlag) -> Outcome {
        var outcome = Outcome()
        let child: Subprocess
        do {
            child = try Subprocess.spawn(executable, arguments, environment: ["PATH": "/usr/bin:/bin", "LC_ALL": "C"],
                                         stdin: stdin == nil ? .null : .pipe, stdout: .pipe, stderr: .null,
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
        while open {
            if flag.isCancelled { outcome.cancelled = true }
            if ContinuousClock.now - started >= timeout { outcome.timedOut = true }
            if outcome.cancelled || outcome.timedOut || outcome.overCap { kill(-child.pid, SIGKILL); break }
            var fds = [pollfd(fd: out.fileDescriptor, events: Int16(POLLIN), revents: 0)]
            if inFD >= 0 { fds.append(pollfd(fd: inFD, events: Int16(POLLOUT), revents: 0)) }
            let left = timeout - (ContinuousClock.now - started)
            if poll(&fds, nfds_t(fds.count), Int32(max(1, min(100, left.milliseconds)))) < 0 && errno != EINTR { break }
            if fds.count > 1, fds[1].revents != 0 {
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
        let status = child.wait()
        outcome.status = (outcome.timedOut || outcome.overCap || outcome.cancelled) ? nil : status
        return outcome
    }
}
