import Kit
import Registry
import Support

/// A restart asked for while the node runs (`openclaw-node restart`, the package's upgrade): it
/// happens at the first moment nothing runs — no invoke in flight (a system.run, a recording, a
/// desktop stream), no talk conversation or held capture — so no work is cut off. Until then the
/// node serves as usual; at that moment the dispatcher refuses new invokes (NODE_NOT_READY,
/// retryable), the daemon stops cleanly and executes itself again: the same identity and device
/// token, one reconnect for the gateway, and after an upgrade the new version. A deadline
/// (`maxWait`) ends the wait: then what runs is cancelled.
public final class GracefulRestart: Sendable {
    struct Pending {
        let reason: String
        let requested = WallClock.milliseconds
        let deadline: ContinuousClock.Instant
        var waitingFor: [String] = []
    }

    private let pending = Locked<Pending?>(nil)
    /// Wakes the watcher when a restart is asked for: until then it sleeps without polling.
    private let asked = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
    private let log = Logger(component: "restart")

    public init() {}

    /// Asks for a restart; a second request keeps the first's reason and the later deadline.
    public func request(reason: String, maxWait: Duration) {
        pending.withLock { p in
            let deadline = ContinuousClock.now + maxWait
            if var existing = p {
                if deadline > existing.deadline { existing = Pending(reason: existing.reason, deadline: deadline, waitingFor: existing.waitingFor) }
                p = existing
            } else {
                p = Pending(reason: reason, deadline: deadline)
            }
        }
        log.info("restart asked for (\(reason)): at the first moment nothing runs, within \(maxWait)")
        asked.continuation.yield()
    }

    /// For `status`: null, or what the restart waits for.
    public var status: JSONValue {
        guard let p = pending.withLock({ $0 }) else { return .null }
        return ["reason": .string(p.reason), "requestedAtMs": .number(Double(p.requested)),
                "waitingFor": .array(p.waitingFor.map { .string($0) })]
    }

    /// What the restart waits for now (kept for `status`).
    @discardableResult
    public func refresh(dispatcher: Dispatcher, busy: @Sendable () async -> [String]) async -> [String] {
        let waiting = (await dispatcher.inFlightCommands).map { "invoke \($0)" } + (await busy())
        pending.withLock { $0?.waitingFor = waiting }
        return waiting
    }

    /// Watches until a requested restart can happen, then drains the dispatcher and calls `fire`.
    /// `busy`: what runs outside invokes (capabilities' activities).
    public func watch(dispatcher: Dispatcher, busy: @escaping @Sendable () async -> [String], fire: @escaping @Sendable () -> Void) async {
        var said: [String] = []
        for await _ in asked.stream { break }  // nothing to do (and no wake-ups) until asked
        while !Task.isCancelled {
            try? await Task.sleep(for: .milliseconds(200))
            guard let p = pending.withLock({ $0 }) else { continue }
            let waiting = await refresh(dispatcher: dispatcher, busy: busy)
            if waiting.isEmpty, await dispatcher.drain("the node is restarting (\(p.reason)); retry in a few seconds") {
                log.info("nothing runs: restarting now (\(p.reason))")
                fire()
                return
            }
            if ContinuousClock.now > p.deadline {
                log.warn("restart (\(p.reason)): still busy with \(waiting.joined(separator: ", ")) at the deadline; restarting anyway")
                await dispatcher.cancelAll("the node is restarting (\(p.reason))")
                fire()
                return
            }
            if waiting != said {
                log.info("restart waits for: \(waiting.joined(separator: ", "))")
                said = waiting
            }
        }
    }
}
