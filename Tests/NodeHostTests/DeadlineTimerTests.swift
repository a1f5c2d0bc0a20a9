@testable import Config
import Foundation
@testable import HostPresence
@testable import Kit
@testable import NodeCLI
@testable import Registry
@testable import Runtime
@testable import Store
@testable import Support
import Testing

@Suite struct DeadlineTimerTests {
    final class Hits: @unchecked Sendable {
        private let lock = NSLock()
        private var fired: [Int] = []
        func add(_ i: Int) { lock.withLock { fired.append(i) } }
        var all: [Int] { lock.withLock { fired } }
    }

    @Test func firesInDeadlineOrderAndCancelDisarms() {
        let t = DeadlineTimer()
        let hits = Hits()
        let now = ContinuousClock.now
        t.schedule(at: now + .milliseconds(150)) { hits.add(3) }
        t.schedule(at: now + .milliseconds(50)) { hits.add(1) }
        let cancelled = t.schedule(at: now + .milliseconds(100)) { hits.add(2) }
        t.cancel(cancelled)
        t.schedule(at: now - .milliseconds(10)) { hits.add(0) }   // already due
        #expect(waitUntil(timeout: 5) { hits.all.count == 3 })
        #expect(hits.all == [0, 1, 3])
        #expect(t.pendingCount == 0)
    }

    @Test func manyArmedAndDisarmedLeaveNothingBehind() {
        let t = DeadlineTimer()
        let tokens = (0..<10_000).map { _ in t.schedule(at: .now + .seconds(30)) {} }
        #expect(t.pendingCount == 10_000)
        tokens.forEach(t.cancel)
        #expect(t.pendingCount == 0)
    }
}
