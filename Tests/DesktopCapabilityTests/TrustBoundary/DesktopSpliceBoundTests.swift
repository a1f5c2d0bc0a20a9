@testable import DesktopCapability
import Foundation
@testable import Kit
@testable import Support
@testable import TestSupport
import Testing

/// desktop.stream toward a VNC server that stops reading: what the gateway sends is taken only
/// while little waits for the server (it once queued all of it: 512 MiB sent, ~1 GB peak). A gateway
/// that sends without end, against a real loopback socket nobody reads, gets a few MiB taken.
@Suite(.serialized) struct DesktopSpliceBoundTests {
    /// A gateway side that always has another 1 MiB message, and counts what was taken.
    final class EndlessGateway: GatewayStream, @unchecked Sendable {
        let taken: Locked<Int>
        /// Set when the last holder lets go: the splice's reader and pump have both ended.
        let released: Locked<Bool>
        init(taken: Locked<Int>, released: Locked<Bool>) { self.taken = taken; self.released = released }
        deinit { released.update { $0 = true } }
        func send(binary: [UInt8]) -> Bool { true }
        var bufferedBytes: Int { 0 }
        func next() async -> GatewayStreamMessage {
            taken.withLock { $0 += 1 << 20 }
            return .binary([UInt8](repeating: 7, count: 1 << 20))
        }
        func close(code: UInt16, reason: String) {}
    }

    @Test func aServerThatStopsReadingStopsTheGatewaySide() async throws {
        let (listener, port) = try bindLoopback()
        defer { close(listener) }
        guard listen(listener, 1) == 0 else { throw TestFailure("listen failed") }
        let client = try TCPSocket.connect(TCPSocket.resolve(host: "127.0.0.1", port: port), timeout: .seconds(2))
        let server = accept(listener, nil, nil)   // the "VNC server": connected, never reads
        defer { close(server) }
        var small: Int32 = 64 * 1024
        setsockopt(server, SOL_SOCKET, SO_RCVBUF, &small, socklen_t(MemoryLayout<Int32>.size))
        let counter = Locked(0), released = Locked(false)
        let cancel = CancelFlag()
        // Only the splice holds the gateway side, so its release says the splice's tasks are over.
        let splice = Task { [counter, released] in
            await RFBSplice.run(server: RFBSocket(client), gateway: EndlessGateway(taken: counter, released: released), pending: [], cancel: cancel)
        }
        // Until the splice stops taking (its windows full): no new MiB for half a second, 20 s at most.
        var taken = -1
        let deadline = ContinuousClock.now + .seconds(20)
        while ContinuousClock.now < deadline {
            let now = counter.withLock { $0 }
            if now == taken && now >= 4 << 20 { break }
            taken = now
            try await Task.sleep(for: .milliseconds(500))
        }
        cancel.cancel()
        let (end, totals) = await splice.value
        #expect(end == .cancelled)
        #expect(taken < 32 << 20, "took \(taken >> 20) MiB from the gateway for a server that reads nothing (wrote \(totals.toServer >> 20) MiB)")
        #expect(taken >= 4 << 20, "the splice took \(taken >> 20) MiB: it should fill its own window first")
        // And its gateway reader ended with it (a cancelled reader that kept looping once spun a
        // thread and starved the tests after it): the gateway side is let go, and nothing more is taken.
        #expect(released.wait(until: { $0 }, timeout: .seconds(10)), "the splice's gateway reader is still running after the splice ended")
        #expect(counter.withLock { $0 } - taken <= 2 << 20, "the reader went on taking after the splice was cancelled")
    }
}
