import Foundation
@testable import Support
import Testing

/// The one blocking executor: named threads, a bound on one-shot jobs with callers beyond it
/// waiting for a slot, and Task cancellation that reaches the job's CancelFlag.
struct BlockingExecutorTests {
    @Test func jobsRunOnThreadsNamedForThem() async {
        let name = await BlockingExecutor.run("exec-test-name") { (_: CancelFlag) in BlockingExecutor.currentThreadName }
        #expect(name == "exec-test-name")
        // Linux keeps 15 bytes of a thread's name.
        let long = await BlockingExecutor.run("a-rather-long-job-name") { (_: CancelFlag) in BlockingExecutor.currentThreadName }
        #expect(long == "a-rather-long-j")
        let loopName = Locked<String?>(nil)
        BlockingExecutor.startLoop(name: "exec-test-loop") { loopName.update { $0 = BlockingExecutor.currentThreadName } }
        #expect(loopName.wait(until: { $0 != nil }, timeout: .seconds(10)))
        #expect(loopName.withLock { $0 } == "exec-test-loop")
    }

    @Test func theJobBeyondTheBoundWaitsForASlot() async {
        let slots = JobSlots(limit: 2)
        let release = CancelFlag()
        let started = Locked<[Int]>([])
        let jobs = (0..<3).map { i in
            Task {
                await BlockingExecutor.run("exec-bound-\(i)", slots: slots) { (_: CancelFlag) in
                    started.update { $0.append(i) }
                    _ = release.sleep(milliseconds: 60_000)
                }
            }
        }
        // Two run; the third caller waits (suspended, no thread of its own yet).
        #expect(slots.wait(until: { running, waiting in running == 2 && waiting == 1 }, timeout: .seconds(10)))
        #expect(started.wait(until: { $0.count == 2 }, timeout: .seconds(10)))
        #expect(started.wait(until: { $0.count == 3 }, timeout: .milliseconds(200)) == false)
        release.cancel()
        for j in jobs { await j.value }
        #expect(started.withLock { $0.count } == 3)
        #expect(slots.counts == (0, 0))
    }

    @Test func cancellingTheTaskRaisesTheJobsFlag() async {
        let entered = CancelFlag()
        let job = Task {
            await BlockingExecutor.run("exec-cancel") { (flag: CancelFlag) -> Bool in
                entered.cancel()
                return flag.sleep(milliseconds: 60_000)  // false: ended by the flag
            }
        }
        _ = entered.sleep(milliseconds: 10_000)
        let asked = ContinuousClock.now
        job.cancel()
        #expect(await job.value == false)
        #expect(ContinuousClock.now - asked < .seconds(5))
    }

    @Test func aCancelledCallerWaitingForASlotIsLetInWithItsFlagRaised() async {
        let slots = JobSlots(limit: 1)
        let release = CancelFlag()
        let holder = Task { await BlockingExecutor.run("exec-holder", slots: slots) { (_: CancelFlag) in _ = release.sleep(milliseconds: 60_000) } }
        #expect(slots.wait(until: { running, _ in running == 1 }, timeout: .seconds(10)))
        let waiter = Task { await BlockingExecutor.run("exec-waiter", slots: slots) { (flag: CancelFlag) in flag.isCancelled } }
        #expect(slots.wait(until: { _, waiting in waiting == 1 }, timeout: .seconds(10)))
        waiter.cancel()
        // It ran although the one slot is still held: cancellation ends the wait for a slot too.
        #expect(await waiter.value == true)
        release.cancel()
        await holder.value
        #expect(slots.counts == (0, 0))
    }

    @Test func aRaisedFlagWakesAPollOnAWakeup() async {
        let flag = CancelFlag()
        let wakeup = Wakeup()
        flag.wakes(wakeup)
        flag.wakes(wakeup)  // once is enough; a second registration adds nothing
        var fds: [Int32] = [-1, -1]
        #expect(pipe(&fds) == 0)
        defer { close(fds[0]); close(fds[1]) }
        let readEnd = fds[0]
        let waiter = Task.detached { wakeup.wait(for: readEnd, timeout: .seconds(60)) }
        try? await Task.sleep(for: .milliseconds(50))
        flag.cancel()
        #expect(await waiter.value == .woken)
        #expect(wakeup.wait(for: readEnd, timeout: .milliseconds(10)) == .woken)  // stays pending
        wakeup.drain()
        #expect(wakeup.wait(for: readEnd, timeout: .milliseconds(10)) == .timedOut)
        // A wake-up registered after the raise is signalled at once.
        let late = Wakeup()
        flag.wakes(late)
        #expect(late.isSignalled)
    }
}
