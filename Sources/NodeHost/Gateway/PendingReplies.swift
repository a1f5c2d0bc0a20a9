/// Requests the node sent and is waiting on (`node.invoke.result`, `node.event`, `connect`):
/// resolved by the matching `res` frame, by a timeout, or when the connection ends.
actor PendingReplies {
    typealias Reply = Result<JSONValue?, GatewayProtocol.GatewayError>
    private var waiting: [String: CheckedContinuation<Reply, Never>] = [:]
    private var counter = 0
    private var closed = false

    func nextId(_ prefix: String = "n") -> String {
        counter += 1
        return "\(prefix)-\(counter)"
    }

    /// Waits for the reply to `id` (register before sending so a fast reply is not missed).
    func wait(_ id: String, timeout: Duration) async -> Reply {
        if closed { return .failure(.init(["code": "UNAVAILABLE", "message": "connection closed"])) }
        return await withCheckedContinuation { c in
            waiting[id] = c
            Task { [weak self] in
                try? await Task.sleep(for: timeout)
                await self?.resolve(id, .failure(.init(["code": "TIMEOUT", "message": "no reply from the gateway"])))
            }
        }
    }

    func resolve(_ id: String, _ reply: Reply) {
        waiting.removeValue(forKey: id)?.resume(returning: reply)
    }

    func failAll(_ why: String) {
        closed = true
        let all = waiting
        waiting.removeAll()
        for c in all.values { c.resume(returning: .failure(.init(["code": "UNAVAILABLE", "message": .string(why)]))) }
    }
}
