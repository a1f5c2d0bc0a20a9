import Config
import HostPresence
import Kit
import Registry
import Store
import Support

/// Requests the node sent and is waiting on (`node.invoke.result`, `node.event`): resolved by the
/// matching `res` frame, by a timeout (code TIMEOUT), or when the connection ends while waiting
/// (code CONNECTION_LOST). Both are the node's own codes: the request may or may not have arrived.
///
/// `expect` registers the id *before* the request is sent, so a reply that arrives before the
/// sender gets to `wait` is kept rather than lost.
actor PendingReplies {
    typealias Reply = Result<JSONValue?, GatewayProtocol.GatewayError>

    private enum Slot {
        case waiting(CheckedContinuation<Reply, Never>?)
        case done(Reply)
    }

    private var slots: [String: Slot] = [:]
    /// Disarmed when the reply arrives (see DeadlineTimer for why this is not a Task.sleep).
    private var timers: [String: DeadlineTimer.Token] = [:]
    private var counter = 0
    private var closed = false

    func nextId(_ prefix: String = "n") -> String {
        counter += 1
        return "\(prefix)-\(counter)"
    }

    func expect(_ id: String, timeout: Duration) {
        // Closed before the request went out: it never arrived.
        if closed { slots[id] = .done(.failure(.init(["code": .string(NodeError.Code.unavailable.rawValue), "message": "connection closed before sending"]))); return }
        slots[id] = .waiting(nil)
        timers[id] = DeadlineTimer.shared.schedule(at: .now + timeout) { [weak self] in
            Task { await self?.resolve(id, .failure(.init(["code": .string(NodeError.Code.timeout.rawValue), "message": "no reply from the gateway"]))) }
        }
    }

    func wait(_ id: String) async -> Reply {
        switch slots[id] {
        case .done(let r)?:
            slots[id] = nil
            return r
        case .waiting(nil)?:
            return await withCheckedContinuation { c in slots[id] = .waiting(c) }
        default:
            return .failure(.init(["code": .string(NodeError.Code.invalidRequest.rawValue), "message": .string("not expecting a reply to \(id)")]))
        }
    }

    func resolve(_ id: String, _ reply: Reply) {
        guard let slot = slots[id] else { return }
        if let t = timers.removeValue(forKey: id) { DeadlineTimer.shared.cancel(t) }
        switch slot {
        case .waiting(let c?):
            slots[id] = nil
            c.resume(returning: reply)
        case .waiting(nil):
            slots[id] = .done(reply)
        case .done:
            break
        }
    }

    func failAll(_ why: String) {
        closed = true
        for id in Array(slots.keys) { resolve(id, .failure(.init(["code": .string(NodeError.Code.connectionLost.rawValue), "message": .string(why)]))) }
    }

    var count: Int { slots.count }
}
