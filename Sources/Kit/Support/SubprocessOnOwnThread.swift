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
        let handoff = SpawnHandoff()
        BlockingExecutor.startLoop(name: name) {
            let child: Subprocess
            do throws(Failure) {
                child = try Subprocess.spawn(executable, arguments, environment: environment,
                                             stdout: stdout, stderr: stderr, newProcessGroup: newProcessGroup)
            } catch {
                handoff.put(.failure(error))
                return
            }
            handoff.put(.success(child))
            while !child.waitForExit(within: .seconds(3600)) {}
        }
        return try handoff.take().get()
    }
}

/// The spawning thread's answer to the caller that waits for it.
private final class SpawnHandoff: @unchecked Sendable {  // `result` is read and written under `ready`
    private let ready = Condition()
    private var result: Result<Subprocess, Subprocess.Failure>?

    func put(_ r: Result<Subprocess, Subprocess.Failure>) {
        ready.lock(); result = r; ready.signal(); ready.unlock()
    }

    func take() -> Result<Subprocess, Subprocess.Failure> {
        ready.lock(); defer { ready.unlock() }
        while true {
            if let r = result { return r }
            ready.wait()
        }
    }
}
