import Glibc

extension Subprocess {
    /// Spawns a child from a thread of its own that stays until the child has exited. For a child
    /// under the process-tree reaper: the reaper's parent-death signal fires when the *thread* that
    /// spawned it ends, not the process, so a child spawned from a job thread (or a cooperative-pool
    /// thread, which ends when idle) would be killed long before the node stops. The thread only
    /// waits on the child's pidfd; the child is reaped by whoever looks first (`poll` keeps the
    /// status), so `wait()` and `terminate()` work on it as on any child.
    public static func spawnOnOwnThread(name: String, _ executable: String, _ arguments: [String],
                                        environment: [String: String]? = nil,
                                        stdout: Stream = .inherit, stderr: Stream = .inherit,
                                        newProcessGroup: Bool = false) throws(Failure) -> Subprocess {
        let started = Locked<Result<Subprocess, Failure>?>(nil)
        BlockingExecutor.startLoop(name: name) {
            let child: Subprocess
            do throws(Failure) {
                child = try Subprocess.spawn(executable, arguments, environment: environment,
                                             stdout: stdout, stderr: stderr, newProcessGroup: newProcessGroup)
            } catch {
                started.update { $0 = .failure(error) }
                return
            }
            started.update { $0 = .success(child) }
            while !child.waitForExit(within: .seconds(3600)) {}
        }
        started.wait { $0 != nil }
        return try started.withLock { $0! }.get()
    }
}
