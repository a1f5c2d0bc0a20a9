import Glibc

/// Runs blocking work (capture, encoding, a child process) on its own thread, so a long recording,
/// waiting for camera frames or a command that runs for minutes never holds a thread of Swift's
/// cooperative pool. Task cancellation (the dispatcher's deadline, a gateway cancel) raises the
/// `CancelFlag` the work polls. Used by the screen, camera and system capabilities; each maps a
/// raised flag to its own outcome (`CancelFlag.check(_:)`).
public enum BlockingThread {
    public static func run<T: Sendable, E: Error>(_ name: String,
                                                  _ body: @escaping @Sendable (CancelFlag) throws(E) -> T) async throws(E) -> T {
        let flag = CancelFlag()
        let result: Result<T, E> = await withTaskCancellationHandler {
            await withCheckedContinuation { (c: CheckedContinuation<Result<T, E>, Never>) in
                DetachedThread.start(name: name, stackSize: 8 << 20) {
                    c.resume(returning: Result { () throws(E) -> T in try body(flag) })
                }
            }
        } onCancel: {
            flag.cancel()
        }
        return try result.get()
    }
}

/// Set once when the caller stops waiting: polled by capture loops between frames, and waited on
/// by `sleep(milliseconds:)`, which wakes the moment it is raised (a condition variable, not a
/// polling loop). Flags made with `either` are raised by their parents.
public final class CancelFlag: Sendable {
    private struct Dependent { weak var flag: CancelFlag? }
    private struct State {
        var raised = false
        /// Flags to raise with this one (made by `either`), held weakly: a long-lived flag does not
        /// keep every short one made from it.
        var dependents: [Dependent] = []
    }
    private let state = Locked(State())

    public init() {}

    public func cancel() {
        let raise: [Dependent]? = state.update { s in
            guard !s.raised else { return nil }
            s.raised = true
            defer { s.dependents = [] }
            return s.dependents
        }
        for d in raise ?? [] { d.flag?.cancel() }
    }

    public var isCancelled: Bool { state.withLock { $0.raised } }

    /// Waits `milliseconds`, or less when the flag is raised meanwhile: false when it was. For
    /// holds and pauses that must end at once on cancel, disconnect or shutdown.
    public func sleep(milliseconds: Int) -> Bool {
        !state.wait(until: { $0.raised }, timeout: .milliseconds(milliseconds))
    }

    /// A flag raised when either of these is.
    public static func either(_ a: CancelFlag, _ b: CancelFlag) -> CancelFlag {
        let c = CancelFlag()
        a.raises(c)
        b.raises(c)
        return c
    }

    /// `other` is raised with this flag (at once when this one already is).
    private func raises(_ other: CancelFlag) {
        let already = state.withLock { s -> Bool in
            if !s.raised {
                s.dependents.removeAll { $0.flag == nil }
                s.dependents.append(Dependent(flag: other))
            }
            return s.raised
        }
        if already { other.cancel() }
    }

    /// Throws `error` once the flag is raised.
    public func check<E: Error>(_ error: @autoclosure () -> E) throws(E) {
        if isCancelled { throw error() }
    }
}
