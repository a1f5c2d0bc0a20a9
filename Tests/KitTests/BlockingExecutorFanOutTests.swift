import Glibc
@testable import Support
import Testing

/// `fanOut`: every index runs exactly once, index 0 on the caller's thread and the others on named
/// threads of their own, all at the same time, and the call returns only after the last one ended.
struct BlockingExecutorFanOutTests {
    @Test(arguments: [0, 1, 2, 4])
    func everyIndexRunsOnceAtTheSameTimeAndTheCallWaitsForAll(count: Int) {
        let caller = BlockingExecutor.currentThreadName
        let arrived = Locked(0)
        let seen = Locked<[Int: String]>([:])
        BlockingExecutor.fanOut("fanout-test", count: count) { i in
            // Each waits for all to have arrived: with one running after another this never holds
            // (the wait times out and the test fails instead of hanging).
            arrived.update { $0 += 1 }
            let together = arrived.wait(until: { $0 == count }, timeout: .seconds(30))
            // The last to finish sleeps a little, so a fanOut that returned early would miss it.
            if i == count - 1 { usleep(50_000) }
            seen.update { $0[i] = together ? BlockingExecutor.currentThreadName : "not together" }
        }
        let names = seen.withLock { $0 }
        #expect(names.keys.sorted() == Array(0..<count))
        for (i, name) in names {
            #expect(name == (i == 0 ? caller : "fanout-test"), "index \(i) ran on \(name)")
        }
    }
}
