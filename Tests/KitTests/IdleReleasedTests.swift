@testable import Support
import Testing

/// IdleReleased: a resource stays while a lease lives, is dropped once the period passes with none,
/// is loaded again by the next lease, and is kept for good when the period is nil.
struct IdleReleasedTests {
    struct LoadFailure: Error {}

    final class Counter: Sendable {
        let loads = Locked(0)
        let releases = Locked(0)
    }

    static func holder(_ c: Counter, after: Duration?) -> IdleReleased<Int, LoadFailure> {
        IdleReleased(load: { .success(c.loads.update { $0 += 1; return $0 }) },
                     releaseAfter: { after },
                     released: { c.releases.update { $0 += 1 } })
    }

    @Test func aLeasedResourceIsKeptAndAnIdleOneDroppedThenLoadedAgain() throws {
        let c = Counter()
        let holder = Self.holder(c, after: .milliseconds(50))
        do {
            let second = try holder.lease().get()
            do {
                let first = try holder.lease().get()
                #expect(first.resource == 1 && second.resource == 1, "one load for both leases")
            }
            // One lease still lives: nothing is released however long we wait for it.
            withExtendedLifetime(second) {
                #expect(!c.releases.wait(until: { $0 > 0 }, timeout: .milliseconds(300)))
                #expect(holder.isLoaded)
            }
        }
        #expect(c.releases.wait(until: { $0 == 1 }, timeout: .seconds(10)), "not released after the last lease ended")
        #expect(!holder.isLoaded)
        let again = try holder.lease().get()
        #expect(again.resource == 2, "loaded again after the release")
        #expect(c.loads.withLock { $0 } == 2)
    }

    @Test func aLeaseTakenBeforeTheTimerFiresKeepsTheResource() throws {
        let c = Counter()
        let holder = Self.holder(c, after: .milliseconds(200))
        _ = try holder.lease().get()  // ends at once: the release is scheduled
        let kept = try holder.lease().get()
        withExtendedLifetime(kept) {
            #expect(!c.releases.wait(until: { $0 > 0 }, timeout: .milliseconds(600)))
            #expect(kept.resource == 1 && c.loads.withLock { $0 } == 1)
        }
    }

    @Test func noPeriodKeepsItLoaded() throws {
        let c = Counter()
        let holder = Self.holder(c, after: nil)
        _ = try holder.lease().get()
        #expect(!c.releases.wait(until: { $0 > 0 }, timeout: .milliseconds(300)))
        #expect(holder.isLoaded)
    }
}
