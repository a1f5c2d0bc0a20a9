import Kit
import Support

/// The progress half of one gateway invoke (docs/PROTOCOL.md "Duplex invokes"): numbers the chunks
/// from 0 without gaps, heartbeats included, and sends them one at a time, each after the gateway
/// answered the one before, so the order on the wire is the order of `seq`. A failed request is
/// not fatal (logged once per invoke); what the gateway answered is the channel's to act on.
actor InvokeProgress {
    /// How often a quiet duplex invoke says it is alive (the gateway's idle deadline is 30 s).
    /// `OPENCLAW_NODE_DUPLEX_HEARTBEAT_MS` shortens it for tests.
    static let heartbeatInterval: Duration = .milliseconds(
        ProcessEnvironment.current["OPENCLAW_NODE_DUPLEX_HEARTBEAT_MS"].flatMap { Int($0) }.map { max(50, $0) } ?? 5_000)

    typealias Call = @Sendable (JSONValue) async -> Result<JSONValue, GatewayProtocol.GatewayError>

    private let invokeId: String
    private let nodeId: String
    private let call: Call
    private let log: Logger
    private var seq = 0
    private var tail: Task<DuplexChannel.Delivery, Never>?
    private var lastSent = ContinuousClock.now
    private var loggedFailure = false

    init(invokeId: String, nodeId: String, log: Logger, call: @escaping Call) {
        self.invokeId = invokeId; self.nodeId = nodeId; self.log = log; self.call = call
    }

    /// Sends one chunk after every chunk sent before it has its answer.
    func send(_ chunk: String) async -> DuplexChannel.Delivery {
        let previous = tail
        let next = Task { _ = await previous?.value; return await self.transmit(chunk) }
        tail = next
        return await next.value
    }

    /// How long nothing went out.
    var idle: Duration { ContinuousClock.now - lastSent }

    private func transmit(_ chunk: String) async -> DuplexChannel.Delivery {
        let n = seq
        seq += 1
        lastSent = .now
        let reply = await call(GatewayProtocol.progress(invokeId: invokeId, nodeId: nodeId, seq: n, chunk: chunk))
        lastSent = .now
        let delivery = GatewayProtocol.progressDelivery(reply)
        if case .failure(let e) = reply, !loggedFailure {
            loggedFailure = true
            log.info("progress of invoke [\(invokeId)] not accepted (seq \(n)): \(e); going on")
        }
        if delivery == .ignored { log.debug("the gateway ignores progress of invoke [\(invokeId)] (seq \(n)); no more is sent") }
        return delivery
    }

    /// For a duplex command: an empty chunk whenever nothing went out for `heartbeatInterval`,
    /// until the channel closes or the task is cancelled.
    static func heartbeats(_ progress: InvokeProgress, _ channel: DuplexChannel) -> Task<Void, Never> {
        return Task {
            let interval = heartbeatInterval
            while !Task.isCancelled {
                let idle = await progress.idle
                if idle >= interval {
                    guard await channel.heartbeat() else { return }
                    continue
                }
                do { try await Task.sleep(for: interval - idle) } catch { return }
            }
        }
    }
}
