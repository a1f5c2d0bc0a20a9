import Support

/// The first of some signals, caught from the moment this is made (on the signals thread, not in
/// a signal handler: SignalRouter): a SIGTERM during start-up is kept and answered once the daemon
/// waits for it, instead of killing the process half-started.
final class SignalLatch: Sendable {
    private struct State {
        var fired: Int32?
        var waiter: CheckedContinuation<Int32, Never>?
    }
    private let state = Locked(State())

    init(_ signals: [Int32]) {
        for s in signals { SignalRouter.route(s) { [weak self] in self?.fire($0) } }
    }

    /// Ends the wait as `s` would (0: a restart the daemon asked itself for).
    func fire(_ s: Int32) {
        let w: CheckedContinuation<Int32, Never>? = state.withLock { st in
            guard st.fired == nil else { return nil }
            st.fired = s
            defer { st.waiter = nil }
            return st.waiter
        }
        w?.resume(returning: s)
    }

    /// The first signal that arrived, waiting for one if none has yet.
    func wait() async -> Int32 {
        await withCheckedContinuation { (c: CheckedContinuation<Int32, Never>) in
            let already: Int32? = state.withLock { st in
                if let fired = st.fired { return fired }
                st.waiter = c
                return nil
            }
            if let already { c.resume(returning: already) }
        }
    }
}

enum SignalWaiter {}

extension SignalWaiter {
    /// Every arrival of `signal`, from now on (SIGHUP → reload). The signal is ignored as a
    /// process-killing default before this returns.
    static func stream(for signal: Int32) -> AsyncStream<Void> {
        let (stream, continuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        SignalRouter.route(signal) { _ in continuation.yield() }
        return stream
    }
}
