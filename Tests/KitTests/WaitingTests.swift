import Foundation
@testable import Support
import Testing

/// The kit's one way to wait: a Locked value that sleepers wake on, and the CancelFlag built on it.
struct WaitingTests {
    @Test func aSleepEndsWhenItsFlagIsRaised() async {
        let flag = CancelFlag()
        let started = ContinuousClock.now
        let sleeper = Task.detached { flag.sleep(milliseconds: 60_000) }
        try? await Task.sleep(for: .milliseconds(50))
        flag.cancel()
        #expect(await sleeper.value == false)
        // Woken by the raise, not by the end of the minute.
        #expect(ContinuousClock.now - started < .seconds(30))
        #expect(CancelFlag().sleep(milliseconds: 1) == true)
    }

    @Test func eitherIsRaisedByEachParentAndFromTheStart() {
        let a = CancelFlag(), b = CancelFlag()
        let c = CancelFlag.either(a, b)
        #expect(!c.isCancelled)
        b.cancel()
        #expect(c.isCancelled && !a.isCancelled)
        let late = CancelFlag.either(a, b)
        #expect(late.isCancelled)
        // Children that are gone are not kept by a long-lived parent.
        let parent = CancelFlag()
        for _ in 0..<1000 { _ = CancelFlag.either(parent, CancelFlag()) }
        parent.cancel()
        #expect(parent.isCancelled)
    }

    @Test func lockedWaitsForAConditionWithoutPolling() async {
        let count = Locked(0)
        let waiter = Task.detached { count.wait(until: { $0 >= 3 }, timeout: .seconds(30)) }
        for _ in 0..<3 { count.update { $0 += 1 } }
        #expect(await waiter.value)
        #expect(count.wait(until: { $0 > 100 }, timeout: .milliseconds(20)) == false)
        #expect(count.withLock { $0 } == 3)
    }
}
