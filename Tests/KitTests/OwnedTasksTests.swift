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
                await Self.untilCancelled()  // a long reply being spoken
                ended.withLock { $0 += 1 }
            })
        }
        let quick = Locked(false)
        tasks.start { quick.withLock { $0 = true } }
        #expect(await Self.onThread { tasks.waitUntilRunning(3, timeout: .seconds(20)) }, "a finished task leaves the set")
        #expect(quick.withLock { $0 })
        #expect(await tasks.cancelAll())
        #expect(ended.withLock { $0 } == 3 && tasks.count == 0, "cancelAll returned before its tasks ended")
        let late = Locked(false)
        #expect(!tasks.start { late.withLock { $0 = true } }, "started after cancelAll")
        // Refused means never made: nothing is running that could still set it.
        #expect(tasks.count == 0 && !late.withLock { $0 })
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
        #expect(await Self.onThread { tasks.waitUntilRunning(0, timeout: .seconds(20)) })
    }

    /// Suspends until the calling task is cancelled (no clock: the cancellation resumes it).
    private static func untilCancelled() async {
        let resumed = Locked<CheckedContinuation<Void, Never>?>(nil)
        await withTaskCancellationHandler {
            await withCheckedContinuation { c in
                let now = resumed.withLock { r -> Bool in
                    if Task.isCancelled { return true }
                    r = c
                    return false
                }
                if now { c.resume() }
            }
        } onCancel: {
            resumed.withLock { r in r?.resume(); r = nil }
        }
    }

    /// A blocking wait, on a thread of its own rather than the cooperative pool.
    private static func onThread(_ body: @escaping @Sendable () -> Bool) async -> Bool {
        await BlockingExecutor.run("test-wait") { (_: CancelFlag) -> Bool in body() }
    }
}
