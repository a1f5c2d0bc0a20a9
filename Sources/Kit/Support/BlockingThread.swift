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

/// Set once when the caller stops waiting; polled by capture loops between frames.
public final class CancelFlag: @unchecked Sendable {
    private let lock = Lock()
    private var raised = false

    private let watched: [CancelFlag]

    public init() { watched = [] }

    public func cancel() { lock.withLock { raised = true } }
    public var isCancelled: Bool { lock.withLock { raised } || watched.contains { $0.isCancelled } }

    /// Waits `milliseconds`, or less when the flag is raised meanwhile (within 5 ms): false when it
    /// was. For holds and pauses that must end at once on cancel, disconnect or shutdown.
    public func sleep(milliseconds: Int) -> Bool {
        let end = ContinuousClock.now + .milliseconds(milliseconds)
        while !isCancelled {
            let left = end - ContinuousClock.now
            if left <= .zero { return true }
            usleep(UInt32(min(left, .milliseconds(5)).milliseconds * 1000))
        }
        return false
    }

    /// A flag raised when either of these is.
    public static func either(_ a: CancelFlag, _ b: CancelFlag) -> CancelFlag { CancelFlag(watching: [a, b]) }

    private init(watching: [CancelFlag]) { watched = watching }

    /// Throws `error` once the flag is raised.
    public func check<E: Error>(_ error: @autoclosure () -> E) throws(E) {
        if isCancelled { throw error() }
    }
}
