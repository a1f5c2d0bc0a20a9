import Glibc
import Support

/// Runs one command to completion in its own process group, under the process-tree reaper
/// (`ProcessTreeReaper`): stdout and stderr captured up to a combined cap (the rest read and
/// dropped, so a chatty command neither blocks nor grows the daemon); at the timeout or when the
/// caller cancels, the reaper kills every descendant, also those that left the process group
/// (`setsid`), then the group is killed as well.
struct CommandRunner {
    /// Upstream's OUTPUT_CAP: bytes of stdout + stderr together.
    static let outputCap = 200_000
    static let truncationSuffix = "\n... (truncated)"

    struct Outcome: Sendable {
        var exitCode: Int32?
        var timedOut = false
        var cancelled = false
        var stdout = ""
        var stderr = ""
        var error: String?
        var truncated = false
        var success: Bool { exitCode == 0 && !timedOut && !cancelled && error == nil }
    }

    let executable: String
    let argv: [String]
    let environment: [String: String]
    let cwd: String?
    let timeout: Duration?
    /// Descriptors the child gets at these numbers (the sandbox's seccomp filter); ours are closed after the spawn.
    var extraFDs: [Int32: Int32] = [:]
    /// Every read of stdout (0) or stderr (1), as it happens, also past the cap (the progress
    /// stream of a gateway invoke); called on the runner's thread and must not block.
    var onOutput: (@Sendable (Int, ArraySlice<UInt8>) -> Void)? = nil

    func run() async -> Outcome {
        let job = self
        return await BlockingExecutor.run("system-run") { (flag: CancelFlag) -> Outcome in job.runBlocking(flag) }
    }

    private func runBlocking(_ flag: CancelFlag) -> Outcome {
        var outcome = Outcome()
        let child: Subprocess
        // Without the helper (an executable that is not openclaw-node's), the process group is all
        // there is to kill.
        let reaped = ProcessTreeReaper.wrap(executable, Array(argv.dropFirst()))
        do {
            defer { extraFDs.values.forEach { _ = close($0) } }
            child = try Subprocess.spawn(reaped?.executable ?? executable, reaped?.arguments ?? Array(argv.dropFirst()),
                                         environment: environment, stdin: .null, stdout: .pipe, stderr: .pipe,
                                         newProcessGroup: true, extraFDs: extraFDs, workingDirectory: cwd)
        } catch {
            outcome.error = error.description
            return outcome
        }
        guard let out = child.stdout, let err = child.stderr else { outcome.error = "no pipes"; return outcome }
        var captured: [[UInt8]] = [[], []]
        var total = 0
        var open = [true, true]
        let fds = [out.fileDescriptor, err.fileDescriptor]
        let started = ContinuousClock.now
        var killedAt: ContinuousClock.Instant?
        var buf = [UInt8](repeating: 0, count: 65536)
        while open[0] || open[1] {
            if killedAt == nil {
                if flag.isCancelled { outcome.cancelled = true }
                if let timeout, ContinuousClock.now - started >= timeout { outcome.timedOut = true }
                if outcome.cancelled || outcome.timedOut {
                    // The reaper kills the whole tree and exits; the group goes too, in case it cannot.
                    if reaped != nil { kill(child.pid, SIGTERM) } else { kill(-child.pid, SIGKILL) }
                    killedAt = .now
                }
            } else if ContinuousClock.now - killedAt! > .seconds(2) {
                break  // something still holds the pipe; stop waiting for it
            } else if reaped != nil, ContinuousClock.now - killedAt! > .milliseconds(500), child.isRunning {
                kill(-child.pid, SIGKILL)
            }
            var pfds = fds.enumerated().filter { open[$0.offset] }.map { pollfd(fd: $0.element, events: Int16(POLLIN), revents: 0) }
            var waitMs: Int32 = 100
            if let timeout, killedAt == nil {
                let left = timeout - (ContinuousClock.now - started)
                waitMs = Int32(max(0, min(100, left.milliseconds)))
            }
            if poll(&pfds, nfds_t(pfds.count), waitMs) < 0 && errno != EINTR { break }
            for p in pfds where p.revents != 0 {
                let index = p.fd == fds[0] ? 0 : 1
                let n = read(p.fd, &buf, buf.count)
                if n <= 0 {
                    if n == 0 || (errno != EINTR && errno != EAGAIN) { open[index] = false }
                    continue
                }
                onOutput?(index, buf[0..<n])
                let room = max(0, Self.outputCap - total)
                if n > room { outcome.truncated = true }
                if room > 0 { captured[index] += buf[0..<min(n, room)]; total += min(n, room) }
            }
        }
        out.close(); err.close()
        let status = child.wait()
        // Killed by us (timeout, cancel): no exit code, as upstream. Otherwise the code, or
        // 128+signal for a child something else killed (what a shell would report).
        outcome.exitCode = killedAt != nil ? nil : status
        outcome.stdout = String(decoding: captured[0], as: UTF8.self)
        outcome.stderr = String(decoding: captured[1], as: UTF8.self)
        if outcome.truncated {
            if outcome.stderr.isEmpty { outcome.stdout += Self.truncationSuffix } else { outcome.stderr += Self.truncationSuffix }
        }
        if outcome.cancelled { outcome.error = "cancelled" }
        return outcome
    }

}
