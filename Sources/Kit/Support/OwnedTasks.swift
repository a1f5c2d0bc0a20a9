/// The tasks an object starts that outlive the call that started them (a reply being spoken, a
/// client being served, an acknowledgement on its way), owned as a task group owns its children:
/// each is held until it ends, and the owner's stop cancels them all and waits for them, so nothing
/// it started runs on after it. For an object whose life is not one async scope, where
/// `withTaskGroup` cannot be used (docs/ARCHITECTURE.md, "Waiting and shared state").
public final class OwnedTasks: Sendable {
    private struct State {
        var running: [Int: Task<Void, Never>] = [:]
        var next = 0
        var closed = false
        /// `cancelAll` callers waiting for the last task to end.
        var drained: [Waiter] = []
    }
    /// One `cancelAll` wait, resumed once: by the last task's end or by its time limit.
    private final class Waiter: Sendable {
        private let continuation: Locked<CheckedContinuation<Bool, Never>?>
        init(_ c: CheckedContinuation<Bool, Never>) { continuation = Locked(c) }
        func resume(_ drained: Bool) { continuation.withLock { c in c?.resume(returning: drained); c = nil } }
    }
    private let state = Locked(State())

    public init() {}

    /// Starts `body` as a task held here until it ends. After `cancelAll` nothing starts (false).
    @discardableResult
    public func start(_ body: @escaping @Sendable () async -> Void) -> Bool {
        state.withLock { s in
            guard !s.closed else { return false }
            let id = s.next
            s.next += 1
            // Made under the lock, so its own removal (which takes the lock) comes after this insert.
            s.running[id] = Task { [state] in
                await body()
                // `update`: a thread waiting on the count (waitUntilRunning) is woken.
                let waiters = state.update { s -> [Waiter] in
                    s.running.removeValue(forKey: id)
                    guard s.closed, s.running.isEmpty else { return [] }
                    defer { s.drained = [] }
                    return s.drained
                }
                for w in waiters { w.resume(true) }
            }
            return true
        }
    }

    /// How many are running now.
    public var count: Int { state.withLock { $0.running.count } }

    /// Blocks this thread until `n` are running (each task's end wakes it), or `timeout` passed.
    func waitUntilRunning(_ n: Int, timeout: Duration) -> Bool {
        state.wait(until: { $0.running.count == n }, timeout: timeout)
    }

    /// Cancels every task and waits until each has ended, or for `limit` at most (a task that does
    /// not notice cancellation must not hold its owner's stop forever): true when all ended.
    /// Later `start`s are refused.
    @discardableResult
    public func cancelAll(waitingAtMost limit: Duration = .seconds(10)) async -> Bool {
        let tasks = state.withLock { s in
            s.closed = true
            return Array(s.running.values)
        }
        guard !tasks.isEmpty else { return true }
        for t in tasks { t.cancel() }
        return await withCheckedContinuation { (c: CheckedContinuation<Bool, Never>) in
            let waiter = Waiter(c)
            let done = state.withLock { s in
                if s.running.isEmpty { return true }
                s.drained.append(waiter)
                return false
            }
            if done { waiter.resume(true); return }
            // Left to fire into a resumed waiter when the tasks end first: harmless.
            _ = DeadlineTimer.shared.schedule(at: .now + limit) { waiter.resume(false) }
        }
    }
}
