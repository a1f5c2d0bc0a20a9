import Kit
import Support

/// A generation counter that async code can wait on: `wait(after:within:)` returns when the
/// counter passes the generation the caller saw, when `timeout` passes, or when the task is
/// cancelled — whichever is first. How a reload wakes the skills publisher of every session
/// without it polling faster.
package final class ChangeSignal: Sendable {
    private struct State {
        var generation: UInt64 = 0
        var nextWaiter: UInt64 = 0
        var waiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
    }
    private let state = Locked(State())

    package var generation: UInt64 { state.withLock { $0.generation } }

    func signal() {
        let woken = state.withLock { s -> [CheckedContinuation<Void, Never>] in
            s.generation += 1
            defer { s.waiters = [:] }
            return Array(s.waiters.values)
        }
        for c in woken { c.resume() }
    }

    package func wait(after seen: UInt64, within timeout: Duration) async {
        let id = state.withLock { s -> UInt64 in s.nextWaiter += 1; return s.nextWaiter }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
                let parked = state.withLock { s -> Bool in
                    guard s.generation == seen, !Task.isCancelled else { return false }
                    s.waiters[id] = c
                    return true
                }
                guard parked else { c.resume(); return }
                DeadlineTimer.shared.schedule(at: .now + timeout) { [state] in
                    state.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
                }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
        }
    }
}
