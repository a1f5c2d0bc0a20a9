import Kit
import Support

/// Gateway events on their way to the capabilities that asked for them: one queue per capability,
/// delivered one at a time in the order the gateway sent them (realtime talk's audio chunks and
/// marks, a chat run's deltas before its final), while a slow capability holds up only itself.
final class GatewayEventQueues: Sendable {
    typealias Event = (name: String, payload: JSONValue)
    private let queues = Locked<[String: AsyncStream<Event>.Continuation]>([:])
    /// The capability of that name advertised now (a reload may have replaced it).
    private let current: @Sendable (String) -> (any GatewaySessionAware)?

    init(current: @escaping @Sendable (String) -> (any GatewaySessionAware)?) { self.current = current }

    /// Queues `name` for each capability named in `to`.
    func deliver(_ name: String, _ payload: JSONValue, to capabilities: [String]) {
        for c in capabilities { queue(c).yield((name, payload)) }
    }

    private func queue(_ capability: String) -> AsyncStream<Event>.Continuation {
        queues.withLock { q in
            if let k = q[capability] { return k }
            let (stream, k) = AsyncStream<Event>.makeStream()
            let current = current
            Task {
                for await e in stream { await current(capability)?.gatewayEvent(e.name, e.payload) }
            }
            q[capability] = k
            return k
        }
    }

    /// Ends every queue's task (the daemon is stopping).
    func finish() {
        for k in queues.withLock({ q in defer { q = [:] }; return Array(q.values) }) { k.finish() }
    }
}
