import Kit
import Support

/// Opening and closing ALSA devices (up to ~100 ms), loading the speech model and synthesizing
/// speech block: talk runs them on a thread of its own, off the cooperative pool.
enum TalkWork {
    static func blocking<T: Sendable>(_ body: @escaping @Sendable () throws(NodeError) -> T) async throws(NodeError) -> T {
        try await BlockingExecutor.run("talk") { (_: CancelFlag) throws(NodeError) -> T in try body() }
    }
}
