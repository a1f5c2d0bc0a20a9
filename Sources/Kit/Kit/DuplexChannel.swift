import Support

/// The two-way side of one invoke, as a handler sees it (docs/PROTOCOL.md "Duplex invokes"): it
/// streams text to the caller while it runs, takes the input the caller sends, and learns that it
/// was cancelled — without touching a frame. The node turns `write` into `node.invoke.progress`
/// requests (sequence numbers, 16 KiB chunks, one at a time) and `node.invoke.input` events into
/// what `nextInput` returns; a command whose manifest row says `duplex: true` also gets the
/// heartbeats that keep an idle invoke alive.
///
/// Cancellation is the handler's Task being cancelled (`node.invoke.cancel`, the deadline, the
/// gateway connection gone, the node stopping): `nextInput` then throws CANCELLED and `write`
/// answers false. The node still sends the invoke's one terminal result.
///
/// Over the control socket (`openclaw-node invoke`) there is no caller to stream to: `write`
/// answers false, `nextInput` waits until the invoke ends.
public final class DuplexChannel: Sendable {
    /// What became of one progress chunk.
    public enum Delivery: Sendable, Equatable {
        /// The gateway took it into a live invoke.
        case accepted
        /// The gateway answered `ignored: true` (nobody listens, the invoke is over): stop sending.
        case ignored
        /// The request failed (an error reply, no reply): not fatal, the next chunk is tried.
        case failed
    }

    /// What the node did with one `node.invoke.input`.
    public enum InputOutcome: Sendable, Equatable {
        case queued
        /// A `seq` already seen: dropped.
        case duplicate
        /// More than `inputBufferBytes` waited unread: the invoke fails closed.
        case overflow
        /// The invoke is over.
        case ended
    }

    /// Input the node keeps unread for a handler (before it first listens, or while it is busy).
    public static let inputBufferBytes = 64 * 1024

    /// What an invoke whose unread input overflowed answers.
    public static let overflowError = NodeError(.inputBufferOverflow,
        "more than \(inputBufferBytes / 1024) KiB of input arrived before the command read it")

    private struct State {
        /// False once the gateway said `ignored`, or the invoke ended.
        var open: Bool
        var ended = false
        var overflowed = false
        var nextSeq = 0
        var queue: [String] = []
        var queuedBytes = 0
        var waiters: [(id: UInt64, resume: CheckedContinuation<Next, Never>)] = []
        var nextWaiter: UInt64 = 0
    }

    private enum Next { case input(String), ended, overflow, cancelled }

    private let state: Locked<State>
    private let transport: @Sendable (String) async -> Delivery

    /// `send` transmits one chunk (≤ 16 KiB UTF-8, "" = heartbeat) and answers what became of it.
    public init(send: @escaping @Sendable (String) async -> Delivery) {
        state = Locked(State(open: true))
        transport = send
    }

    /// A channel with nobody on the other end (control socket, one-shot CLI, tests).
    public static func detached() -> DuplexChannel {
        let c = DuplexChannel { _ in .ignored }
        c.state.withLock { $0.open = false }
        return c
    }

    // MARK: the handler's side

    /// Whether streaming is still wanted: false once the gateway said `ignored: true` or the invoke
    /// ended. A handler that only streams can stop producing then.
    public var isOpen: Bool { state.withLock { $0.open } }

    /// Streams `text` to the caller as progress: cut into ≤ 16 KiB UTF-8 chunks on code point
    /// boundaries, sent in order, each after the previous one's answer. False when the gateway no
    /// longer takes progress for this invoke (the rest is not sent) or the invoke is over.
    @discardableResult
    public func write(_ text: String) async -> Bool {
        for chunk in ProgressText.chunks(text) {
            guard isOpen, !Task.isCancelled else { return false }
            if await transport(chunk) == .ignored { stopStreaming(); return false }
        }
        return isOpen && !Task.isCancelled
    }

    /// The next input the caller sent (its `payloadJSON` text, often JSON, or a framed message of
    /// `FramedChannel`), in `seq` order; waits for one. nil when the invoke is over. Throws
    /// CANCELLED when the invoke is cancelled, INPUT_BUFFER_OVERFLOW when the caller sent more than
    /// 64 KiB the handler did not read.
    public func nextInput() async throws(NodeError) -> String? {
        // This call's place among the waiters, so a cancel wakes this one and no other reader.
        let me = state.withLock { s in s.nextWaiter += 1; return s.nextWaiter }
        let next: Next = await withTaskCancellationHandler {
            await withCheckedContinuation { (c: CheckedContinuation<Next, Never>) in
                let ready: Next? = state.withLock { s in
                    if s.overflowed { return .overflow }
                    if !s.queue.isEmpty {
                        let v = s.queue.removeFirst()
                        s.queuedBytes -= v.utf8.count
                        return .input(v)
                    }
                    if s.ended { return .ended }
                    if Task.isCancelled { return .cancelled }
                    s.waiters.append((me, c))
                    return nil
                }
                if let ready { c.resume(returning: ready) }
            }
        } onCancel: {
            let mine = state.withLock { s -> CheckedContinuation<Next, Never>? in
                guard let i = s.waiters.firstIndex(where: { $0.id == me }) else { return nil }
                return s.waiters.remove(at: i).resume
            }
            mine?.resume(returning: .cancelled)
        }
        switch next {
        case .input(let text): return text
        case .ended: return nil
        case .overflow: throw Self.overflowError
        case .cancelled: throw NodeError(.cancelled, "the invoke was cancelled")
        }
    }

    // MARK: the node's side

    /// Sends one heartbeat (an empty chunk); false once streaming is over.
    public func heartbeat() async -> Bool {
        guard isOpen else { return false }
        if await transport("") == .ignored { stopStreaming(); return false }
        return true
    }

    /// One `node.invoke.input` for this invoke. A `seq` below the next expected one is a duplicate;
    /// a gap is accepted (the gateway numbers from 0 without gaps, but a lost one is not waited for).
    public func deliver(seq: Int, payload: String) -> InputOutcome {
        let (outcome, waiter) = state.withLock { s -> (InputOutcome, CheckedContinuation<Next, Never>?) in
            if s.ended { return (.ended, nil) }
            if seq < s.nextSeq { return (.duplicate, nil) }
            s.nextSeq = seq + 1
            if !s.waiters.isEmpty { return (.queued, s.waiters.removeFirst().resume) }
            guard s.queuedBytes + payload.utf8.count <= Self.inputBufferBytes else {
                s.overflowed = true
                s.queue = []; s.queuedBytes = 0
                return (.overflow, nil)
            }
            s.queue.append(payload)
            s.queuedBytes += payload.utf8.count
            return (.queued, nil)
        }
        waiter?.resume(returning: .input(payload))
        return outcome
    }

    /// The invoke is over: no more progress goes out, waiting readers get nil.
    public func end() {
        let woken = state.withLock { s -> [CheckedContinuation<Next, Never>] in
            s.open = false
            s.ended = true
            defer { s.waiters = [] }
            return s.waiters.map(\.resume)
        }
        for w in woken { w.resume(returning: .ended) }
    }

    private func stopStreaming() { state.withLock { $0.open = false } }
}
