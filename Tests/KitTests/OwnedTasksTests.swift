import Foundation
@testable import Support
import Testing

/// OwnedTasks: what it starts is held until it ends; cancelAll cancels, waits, and refuses more;
/// a task that ignores cancellation holds the stop only up to the limit.
struct OwnedTasksTests {
    @Test func tasksAreHeldUntilTheyEndAndCancelAllWaitsForThem() async {
        let tasks = OwnedTasks()
        let ended = Locked(0)
        for _ in 0..<3 {
            #expect(tasks.start {
                // Until cancelled (a long reply being spoken).
                while !Task.isCancelled { try? await Task.sleep(for: .milliseconds(5)) }
                ended.withLock { $0 += 1 }
            })
        }
        let quick = Locked(false)
        tasks.start { quick.withLock { $0 = true } }
        #expect(await waitFor { quick.withLock { $0 } && tasks.count == 3 }, "a finished task leaves the set")
        #expect(await tasks.cancelAll())
        #expect(ended.withLock { $0 } == 3 && tasks.count == 0, "cancelAll returned before its tasks ended")
        let late = Locked(false)
        #expect(!tasks.start { late.withLock { $0 = true } }, "started after cancelAll")
        try? await Task.sleep(for: .milliseconds(50))
        #expect(!late.withLock { $0 })
        #expect(await tasks.cancelAll(), "nothing left: at once")
    }

    @Test func aTaskThatIgnoresCancellationHoldsTheStopOnlyUpToTheLimit() async {
        let tasks = OwnedTasks()
        let release = Locked(false)
        // Blocks on a thread of its own, deaf to cancellation (its flag is raised and ignored).
        tasks.start { _ = await BlockingExecutor.run("deaf") { (_: CancelFlag) -> Bool in release.wait(until: { $0 }) } }
        let started = ContinuousClock.now
        #expect(await tasks.cancelAll(waitingAtMost: .milliseconds(200)) == false)
        let waited = ContinuousClock.now - started
        #expect(waited >= .milliseconds(150) && waited < .seconds(5), "\(waited)")
        release.update { $0 = true }  // update wakes the waiter (withLock does not)
        #expect(await waitFor { tasks.count == 0 })
    }

    private func waitFor(_ condition: @Sendable () -> Bool) async -> Bool {
        for _ in 0..<400 {
            if condition() { return true }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return condition()
    }
}
