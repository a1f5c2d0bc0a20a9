import Glibc
import Synchronization
@testable import Support
import Testing

/// The syscall layer's retry rules, with the kernel's partial answers injected: EINTR, EAGAIN (and
/// a poll that says when to go on), short writes and short reads; and a descriptor closed once.
struct SystemIOTests {
    /// A stand-in kernel: each call takes the next scripted answer; the bytes written are kept.
    final class FakeKernel: Sendable {
        enum Answer: Sendable { case interrupted, wouldBlock, fail(Int32), take(Int), all }
        struct State { var writes: [Answer] = []; var reads: [Answer] = []; var written: [UInt8] = []
                       var source: [UInt8] = []; var polls = 0; var pollReady = true; var closed: [Int32] = [] }
        let state = Mutex(State())

        init(writes: [Answer] = [], reads: [Answer] = [], source: [UInt8] = [], pollReady: Bool = true) {
            state.withLock { $0.writes = writes; $0.reads = reads; $0.source = source; $0.pollReady = pollReady }
        }

        static func copy(_ s: inout State, into buf: UnsafeMutableRawPointer, _ n: Int) -> (Int, Errno?) {
            let c = min(n, s.source.count)
            for i in 0..<c { buf.storeBytes(of: s.source[i], toByteOffset: i, as: UInt8.self) }
            s.source.removeFirst(c)
            return (c, nil)
        }

        var calls: SystemCalls {
            SystemCalls(
                read: { _, buf, n in
                    self.state.withLock { s -> (Int, Errno?) in
                        let answer = s.reads.isEmpty ? .all : s.reads.removeFirst()
                        switch answer {
                        case .interrupted: return (-1, .interrupted)
                        case .wouldBlock: return (-1, .wouldBlock)
                        case .fail(let e): return (-1, Errno(e))
                        case .take(let k): return Self.copy(&s, into: buf, min(k, n))
                        case .all: return Self.copy(&s, into: buf, n)
                        }
                    }
                },
                write: { _, buf, n, _ in
                    self.state.withLock { s -> (Int, Errno?) in
                        let answer = s.writes.isEmpty ? .all : s.writes.removeFirst()
                        switch answer {
                        case .interrupted: return (-1, .interrupted)
                        case .wouldBlock: return (-1, .wouldBlock)
                        case .fail(let e): return (-1, Errno(e))
                        case .take(let k):
                            let c = min(k, n)
                            s.written += UnsafeRawBufferPointer(start: buf, count: c)
                            return (c, nil)
                        case .all:
                            s.written += UnsafeRawBufferPointer(start: buf, count: n)
                            return (n, nil)
                        }
                    }
                },
                poll: { _, _, _ in self.state.withLock { s in s.polls += 1; return (s.pollReady, nil) } },
                close: { fd in self.state.withLock { $0.closed.append(fd) }; return nil })
        }
    }

    static let payload: [UInt8] = Array(0..<200).map { UInt8($0) }

    @Test func writesContinueAfterInterruptionsShortWritesAndAFullPipe() throws {
        let k = FakeKernel(writes: [.interrupted, .take(7), .wouldBlock, .interrupted, .take(1), .take(50), .wouldBlock, .all])
        try SystemIO(k.calls).writeAll(3, Self.payload)
        let s = k.state.withLock { $0 }
        #expect(s.written == Self.payload, "every byte once, in order")
        #expect(s.polls == 2, "a full pipe is waited for, not spun on")
    }

    @Test func aWriteErrorEndsItAndAFullPipeThatStaysFullTimesOut() {
        let broken = FakeKernel(writes: [.take(10), .fail(EPIPE)])
        #expect(throws: Errno.brokenPipe) { try SystemIO(broken.calls).writeAll(3, Self.payload) }
        #expect(broken.state.withLock { $0.written.count } == 10)
        let stuck = FakeKernel(writes: [.wouldBlock], pollReady: false)
        #expect(throws: Errno.timedOut) { try SystemIO(stuck.calls).writeAll(3, Self.payload, timeoutMs: 5) }
    }

    @Test func readExactlyCollectsShortReadsAndReportsAnEarlyEnd() throws {
        let k = FakeKernel(reads: [.interrupted, .take(3), .wouldBlock, .take(1), .interrupted, .all], source: Self.payload)
        #expect(try SystemIO(k.calls).readExactly(3, 120) == Array(Self.payload.prefix(120)))
        #expect(k.state.withLock { $0.polls } == 1)
        let short = FakeKernel(reads: [.take(5), .all], source: Array(Self.payload.prefix(8)))
        #expect(throws: SystemIO.ReadFailure.endOfFile(.init(read: 8))) { try SystemIO(short.calls).readExactly(3, 20) }
        let failing = FakeKernel(reads: [.take(2), .fail(ECONNRESET)], source: Self.payload)
        #expect(throws: SystemIO.ReadFailure.errno(Errno(ECONNRESET))) { try SystemIO(failing.calls).readExactly(3, 20) }
    }

    @Test func aDescriptorIsClosedExactlyOnce() throws {
        let k = FakeKernel()
        do { _ = FileDescriptor(owning: 41, io: SystemIO(k.calls)) }                    // dropped: closed by its owner going away
        let explicit = FileDescriptor(owning: 42, io: SystemIO(k.calls)); try explicit.close()   // closed, and not again
        let handed = FileDescriptor(owning: 43, io: SystemIO(k.calls)); #expect(handed.release() == 43)  // handed on: not closed
        #expect(k.state.withLock { $0.closed } == [41, 42])
    }

    @Test func theRealKernelThroughAPipe() throws {
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        let reader = FileDescriptor(owning: ends[0]), writer = FileDescriptor(owning: ends[1])
        try writer.writeAll(Self.payload)
        #expect(try reader.readExactly(Self.payload.count) == Self.payload)
        try writer.close()
        #expect(throws: SystemIO.ReadFailure.endOfFile(.init(read: 0))) { try reader.readExactly(1) }
    }
}
