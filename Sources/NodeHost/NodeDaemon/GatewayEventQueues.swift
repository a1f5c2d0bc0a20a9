import Kit
import Support

/// Gateway events on their way to the capabilities that asked for them: one queue per capability,
/// delivered one at a time in the order the gateway sent them (realtime talk's audio chunks and
/// marks, a chat run's deltas before its final), while a slow capability holds up only itself.
final class GatewayEventQueues: Sendable {
    typealias Event = (name: String, payload: JSONValue)
    /// Each capability's queue and the task that empties it (it ends when the queue is finished).
    private let queues = Locked<[String: (queue: AsyncStream<Event>.Continuation, task: Task<Void, Never>)]>([:])
    /// The capability of that name advertised now (a reload may have replaced it).
    private let current: @Sendable (String) -> (any GatewaySessionAware)?

    init(current: @escaping @Sendable (String) -> (any GatewaySessionAware)?) { self.current = current }

    /// Queues `name` for each capability named in `to`.
    func deliver(_ name: String, _ payload: JSONValue, to capabilities: [String]) {
        for c in capabilities { queue(c).yield((name, payload)) }
    }

    private func queue(_ capability: String) -> AsyncStream<Event>.Continuation {
        queues.withLock { q in
            if let k = q[capability] { return k.queue }
            let (stream, k) = AsyncStream<Event>.makeStream()
            let current = current
            let task = Task {
                for await e in stream { await current(capability)?.gatewayEvent(e.name, e.payload) }
            }
            q[capability] = (k, task)
            return k
        }
    }

    /// Ends every queue and its task (the daemon is stopping; what is still queued is dropped).
    func finish() {
        for k in queues.withLock({ q in defer { q = [:] }; return Array(q.values) }) {
            k.queue.finish()
            k.task.cancel()
        }
    }
}
