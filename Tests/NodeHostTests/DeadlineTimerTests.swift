@testable import Config
import Foundation
@testable import GatewaySession
@testable import HostPresence
@testable import Kit
@testable import NodeCLI
@testable import Registry
@testable import Store
@testable import Support
@testable import TestSupport
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

/// The gateway connection's last-frame time, and the wait for the next frame a probe does.
@Suite struct LockedInstantTests {
    @Test func aFrameEndsTheWaitAndNoFrameTimesOut() async {
        let last = LockedInstant()
        let sent = ContinuousClock.now
        let waiter = Task { await last.frame(after: sent, within: .seconds(30)) }
        try? await Task.sleep(for: .milliseconds(20))
        let touched = ContinuousClock.now
        last.touch()
        #expect(await waiter.value)
        #expect(ContinuousClock.now - touched < .seconds(5), "woken by the frame, not the 30 s timeout")
        // A frame already newer than the instant: true at once.
        #expect(await last.frame(after: sent, within: .seconds(30)))
        let started = ContinuousClock.now
        #expect(await last.frame(after: .now, within: .milliseconds(50)) == false)
        #expect(ContinuousClock.now - started < .seconds(5))
    }
}
