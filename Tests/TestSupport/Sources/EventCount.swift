import Support

/// A count of things that happened, which a test awaits without polling: `reach(n)` returns as
/// soon as `add()` brings the count to `n` (true), or at its deadline (false).
final class EventCount: Sendable {
    private struct Waiter: Sendable { let id: Int, n: Int, resume: CheckedContinuation<Bool, Never> }
    private struct State: Sendable { var count = 0, nextId = 0; var waiters: [Waiter] = [] }
    private let state = Locked(State())

    init() {}

    var count: Int { state.withLock { $0.count } }

    func add() {
        let ready = state.withLock { s -> [Waiter] in
            s.count += 1
            let count = s.count
            defer { s.waiters.removeAll { $0.n <= count } }
            return s.waiters.filter { $0.n <= count }
        }
        for w in ready { w.resume.resume(returning: true) }
    }

    func reach(_ n: Int, within limit: Duration = .seconds(30)) async -> Bool {
        let id = state.withLock { s -> Int in s.nextId += 1; return s.nextId }
        let deadline = Task { try? await Task.sleep(for: limit); self.expire(id) }
        defer { deadline.cancel() }
        return await withCheckedContinuation { (c: CheckedContinuation<Bool, Never>) in
            let already = state.withLock { s -> Bool in
                if s.count >= n { return true }
                s.waiters.append(Waiter(id: id, n: n, resume: c))
                return false
            }
            if already { c.resume(returning: true) }
        }
    }

    private func expire(_ id: Int) {
        let w = state.withLock { s -> Waiter? in
            guard let i = s.waiters.firstIndex(where: { $0.id == id }) else { return nil }
            return s.waiters.remove(at: i)
        }
        w?.resume.resume(returning: false)
    }
}
