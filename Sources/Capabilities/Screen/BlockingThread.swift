import Foundation
import NodeHost

/// Runs capture/encode work on its own thread, so a long recording (or a slow PNG) never holds a
/// thread of Swift's cooperative pool. Task cancellation (the dispatcher's deadline, a gateway
/// cancel) raises the `CancelFlag` the work polls.
enum BlockingThread {
    static func run<T: Sendable>(_ name: String,
                                 _ body: @escaping @Sendable (CancelFlag) throws(NodeError) -> T) async throws(NodeError) -> T {
        let flag = CancelFlag()
        let result: Result<T, NodeError> = await withTaskCancellationHandler {
            await withCheckedContinuation { (c: CheckedContinuation<Result<T, NodeError>, Never>) in
                let thread = Thread {
                    c.resume(returning: Result { () throws(NodeError) -> T in try body(flag) })
                }
                thread.name = name
                thread.stackSize = 8 << 20
                thread.start()
            }
        } onCancel: {
            flag.cancel()
        }
        return try result.get()
    }
}

/// Set once when the caller stops waiting; polled by capture loops between frames.
final class CancelFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var raised = false

    func cancel() { lock.withLock { raised = true } }
    var isCancelled: Bool { lock.withLock { raised } }

    func check() throws(NodeError) {
        if isCancelled { throw ScreenError.cancelled() }
    }
}
