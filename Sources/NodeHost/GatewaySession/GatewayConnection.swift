import Config
import Glibc
import HostPresence
import Kit
import Registry
import Store
import Support
import Transport

/// One WebSocket connection to the gateway: the handshake, then serving invokes until it ends.
/// The reconnect policy lives in GatewayClient; this type only reports how the connection ended.
final class GatewayConnection: @unchecked Sendable {  // not for a lock: the iterator and handshake fields belong to the one task running the connection
    enum HandshakeResult {
        case ready(GatewayProtocol.HelloOk)
        case rejected(GatewayProtocol.GatewayError)
        /// The gateway sent what the protocol does not allow (a challenge without a nonce, a reply
        /// that is not hello-ok): retrying cannot help.
        case malformed(String)
        case failed(String)
    }

    struct End: Sendable {
        let code: UInt16?
        let reason: String
        /// From a `shutdown` event: when the gateway expects to be back.
        let restartExpectedMs: Int?
    }

    let ws: WebSocketConnection
    private var iterator: AsyncStream<WebSocketEvent>.Iterator
    private let pending = PendingReplies()
    private let log: Logger
    private let clock = ContinuousClock()
    private let lastFrame = LockedInstant()
    /// How many invokes of this connection still run (they are children of its task group, which
    /// cancels them when it ends; the number is for the log line that says so).
    private let runningInvokes = Locked(0)
    /// The progress/input channels of the invokes running on this connection, by invoke id.
    private let channels = Locked<[String: DuplexChannel]>([:])
    /// `node.event` answers already logged as not handled (event + reason): said once, readable.
    private let unhandledLogged = Locked<Set<String>>([])
    private var restartExpectedMs: Int?
    private var maxPayload = GatewayProtocol.preAuthMaxPayload
    /// Gateway events other than the ones handled here (chat, voicewake.changed, …), for capabilities.
    private let onEvent: (@Sendable (String, JSONValue?) -> Void)?

    /// `node.pair.resolved` / `device.pair.resolved`: a paused session of this device may resume.
    private let onPairResolved: (@Sendable (JSONValue) -> Void)?

    init(ws: WebSocketConnection, log: Logger, onEvent: (@Sendable (String, JSONValue?) -> Void)? = nil,
         onPairResolved: (@Sendable (JSONValue) -> Void)? = nil) {
        self.ws = ws
        self.onEvent = onEvent
        self.onPairResolved = onPairResolved
        self.iterator = ws.events.makeAsyncIterator()
        self.log = log
    }

    // MARK: handshake

    /// Waits for `connect.challenge`, sends `connect` built from its nonce, returns hello-ok or the refusal.
    func handshake(timeout: Duration, buildConnect: @Sendable (_ nonce: String) throws -> JSONValue) async -> HandshakeResult {
        let watchdog = Task { [ws] in
            try? await Task.sleep(for: timeout)
            if !Task.isCancelled { ws.close(code: 1000, reason: "handshake timeout") }
        }
        defer { watchdog.cancel() }
        var nonce: String?
        while nonce == nil {
            guard let ev = await iterator.next() else { return .failed("connection ended before the challenge") }
            switch ev {
            case .text(let t):
                if let tooBig = oversizeBeforeHello(t) { return tooBig }
                if case .event("connect.challenge", let p)? = GatewayProtocol.parse(t) {
                    guard let n = p?["nonce"]?.stringValue?.trimmed(), !n.isEmpty else {
                        return .malformed("connect.challenge without a nonce")
                    }
                    nonce = n
                }
            case .closed(let code, let reason):
                return .failed(watchdog.isCancelled ? "closed (\(code.map(String.init) ?? "-")) \(reason)"
                                                    : "no connect.challenge within \(timeout): \(reason) (\(code.map(String.init) ?? "-"))")
            default: continue
            }
        }
        let params: JSONValue
        do { params = try buildConnect(nonce!) } catch { return .failed("cannot build connect: \(error)") }
        let id = await pending.nextId("connect")
        ws.send(text: GatewayProtocol.request(id: id, method: "connect", params: params).jsonString())
        while true {
            guard let ev = await iterator.next() else { return .failed("connection ended during the handshake") }
            switch ev {
            case .text(let t):
                if let tooBig = oversizeBeforeHello(t) { return tooBig }
                guard case .response(let rid, let ok, let payload, let error)? = GatewayProtocol.parse(t), rid == id else { continue }
                if !ok { return .rejected(error ?? .init(nil)) }
                guard let hello = GatewayProtocol.HelloOk(payload) else { return .malformed("connect succeeded but the reply is not hello-ok") }
                maxPayload = hello.maxPayload
                // Inbound: a gateway advertising a tiny limit still sends invoke frames bigger
                // than that (its own envelope); refusing them would break the session.
                ws.maxMessageBytes = max(hello.maxPayload, GatewayProtocol.preAuthMaxPayload)
                return .ready(hello)
            case .closed(let code, let reason):
                return .failed("closed during the handshake (\(code.map(String.init) ?? "-") \(reason))")
            default: continue
            }
        }
    }

    /// The pre-auth frame limit, checked per message (see `decoderLimitBeforeHello`).
    private func oversizeBeforeHello(_ text: String) -> HandshakeResult? {
        let n = text.utf8.count
        guard n > GatewayProtocol.preAuthMaxPayload else { return nil }
        ws.close(code: 1009, reason: "frame too large before hello")
        return .failed("the gateway sent a \(n)-byte frame before hello-ok (at most \(GatewayProtocol.preAuthMaxPayload))")
    }

    /// After a pairing refusal with `details.waitForResolution`: reads the still open socket for
    /// the gateway's `device.pair.resolved` / `node.pair.resolved`; nil when it closes first.
    func pairingResolution() async -> JSONValue? {
        while let ev = await iterator.next() {
            guard case .text(let t) = ev, case .event(let name, let p)? = GatewayProtocol.parse(t),
                  name == "device.pair.resolved" || name == "node.pair.resolved" else { continue }
            log.info("\(name) on the waiting socket: \(p?["decision"]?.stringValue ?? "?")")
            return p ?? .object([:])
        }
        return nil
    }

    // MARK: serving

    /// Serves until the connection ends. Invokes run concurrently; the reader never waits on one.
    /// `dispatcher` nil: an operator session, which serves no invokes.
    /// `hostStats`: the node session's `node.host.stats` reporter, run while the session lasts;
    /// `skills`: its `node.skills.update` publisher, likewise.
    ///
    /// Everything the session starts — each invoke, the reporter, the publisher, the tick watchdog,
    /// the hops to the dispatcher and the pending replies — is a child of one task group: when the
    /// connection ends (or the task serving it is cancelled) the group is cancelled as one, so work
    /// whose answer nobody can receive stops (the cancellation raises the CancelFlag its blocking
    /// job waits on), and this returns once all of it has let go. An invoke answers its caller at
    /// once when cancelled (Dispatcher), so that wait is short.
    func serve(tickIntervalMs: Int, nodeId: String, dispatcher: Dispatcher?, hostStats: HostStatsReporter? = nil,
               skills: SkillsPublisher? = nil) async -> End {
        lastFrame.touch()
        return await withDiscardingTaskGroup(returning: End.self) { group in
            if let hostStats {
                group.addTask { [log] in await hostStats.run(log: log) { params in await self.call("node.event", params: params) } }
            }
            if let skills {
                group.addTask { [log] in
                    await skills.run(log: log) { params in
                        await self.call(GatewayProtocol.skillsUpdateMethod, params: params, timeout: .seconds(30))
                    }
                }
            }
            let tick = Duration.milliseconds(tickIntervalMs)
            group.addTask { [ws, lastFrame, log] in
                while !Task.isCancelled {
                    try? await Task.sleep(for: min(tick / 4, .seconds(1)))
                    if lastFrame.age > tick * 2, !Task.isCancelled {
                        log.warn("nothing from the gateway for \(lastFrame.age) (tick \(tickIntervalMs) ms); reconnecting")
                        ws.close(code: 4000, reason: "tick timeout")
                        return
                    }
                }
            }
            var end = End(code: nil, reason: "connection ended", restartExpectedMs: nil)
            loop: while let ev = await iterator.next() {
                switch ev {
                case .text(let t):
                    lastFrame.touch()
                    handle(t, nodeId: nodeId, dispatcher: dispatcher, group: &group)
                case .binary, .pong:
                    lastFrame.touch()
                case .closed(let code, let reason):
                    end = End(code: code, reason: reason, restartExpectedMs: restartExpectedMs)
                    break loop
                }
            }
            await pending.failAll("connection closed")
            let orphaned = runningInvokes.withLock { $0 }
            if orphaned > 0 { log.info("the gateway connection ended with \(orphaned) invoke(s) running; cancelling them") }
            group.cancelAll()
            return end
        }
    }

    /// One frame from the gateway; what it starts is added to the connection's `group`.
    private func handle(_ text: String, nodeId: String, dispatcher: Dispatcher?, group: inout DiscardingTaskGroup) {
        guard let frame = GatewayProtocol.parse(text) else {
            log.debug("ignoring a malformed frame (\(text.prefix(120)))")
            return
        }
        switch frame {
        case .event("node.invoke.request", _) where dispatcher == nil, .event("node.invoke.cancel", _) where dispatcher == nil,
             .event("node.invoke.input", _) where dispatcher == nil:
            log.debug("ignoring an invoke on the operator session")
        case .event("node.invoke.request", let p):
            guard let dispatcher else { return }
            guard let req = GatewayProtocol.InvokeRequest(p) else { log.warn("ignoring a node.invoke.request without id/command"); return }
            // Registered here, on the reader, so input that follows the request at once finds it.
            let duplex = openChannel(req.id, nodeId: nodeId)
            runningInvokes.withLock { $0 += 1 }
            group.addTask {
                await self.runInvoke(req, nodeId: nodeId, dispatcher: dispatcher, duplex: duplex)
                self.runningInvokes.withLock { $0 -= 1 }
            }
        case .event("node.invoke.cancel", let p):
            if let dispatcher, let id = GatewayProtocol.cancelledInvokeId(p) {
                log.info("the gateway cancelled invoke [\(id)]")
                // Its request may have arrived with the invoke not started yet: then it is kept.
                let arrived = channels.withLock { $0[id] != nil }
                group.addTask { await dispatcher.cancel(id: id, arrived: arrived) }
            }
        case .event("node.invoke.input", let p):
            guard let input = GatewayProtocol.InvokeInput.read(p) else { log.info("dropping a malformed node.invoke.input"); return }
            guard let channel = channels.withLock({ $0[input.id] }) else {
                log.debug("node.invoke.input for invoke [\(input.id)], which is not running here; ignored")
                return
            }
            switch channel.deliver(seq: input.seq, payload: input.payloadJSON) {
            case .queued, .ended: break
            case .duplicate: log.debug("duplicate node.invoke.input seq \(input.seq) for [\(input.id)]; ignored")
            case .overflow:
                log.warn("invoke [\(input.id)]: the gateway sent more than \(DuplexChannel.inputBufferBytes / 1024) KiB of input the command did not read; failing it")
                if let dispatcher {
                    group.addTask { await dispatcher.cancel(id: input.id, error: DuplexChannel.overflowError) }
                }
            }
        case .event("shutdown", let p):
            restartExpectedMs = p?["restartExpectedMs"]?.intValue
            log.info("gateway is shutting down (\(p?["reason"]?.stringValue ?? "no reason"))\(restartExpectedMs.map { "; back in about \($0) ms" } ?? "")")
        case .event(let name, let p) where name == "device.pair.resolved" || name == "node.pair.resolved":
            log.info("\(name): \(p?["decision"]?.stringValue ?? "?")\(p?["requestId"]?.stringValue.map { " (request \($0))" } ?? "")")
            if let p { onPairResolved?(p) }
        case .event("tick", _), .event("health", _), .event("presence", _):
            break  // liveness only
        case .event(let name, let p):
            onEvent?(name, p)
        case .response(let id, let ok, let payload, let error):
            group.addTask { [pending] in await pending.resolve(id, ok ? .success(payload) : .failure(error ?? .init(nil))) }
        case .request(let id, let method, _):
            // Only defensive answers: the gateway does not normally send requests to nodes.
            let reply = method == "ping"
                ? GatewayProtocol.response(id: id, ok: true, payload: ["pong": true], error: nil)
                : GatewayProtocol.response(id: id, ok: false, payload: nil, error: .invalidRequest("unknown method: \(method)"))
            ws.send(text: reply.jsonString())
        }
    }

    /// An invoke's progress sender and channel, registered for its input; nil when an invoke with
    /// this id already runs (the dispatcher refuses the second one; the first keeps its channel).
    private func openChannel(_ invokeId: String, nodeId: String) -> (channel: DuplexChannel, progress: InvokeProgress)? {
        let progress = InvokeProgress(invokeId: invokeId, nodeId: nodeId, log: log) { [weak self] params in
            guard let self else { return .failure(.init(["code": .string(NodeError.Code.connectionLost.rawValue), "message": "connection gone"])) }
            return await self.call("node.invoke.progress", params: params, timeout: .seconds(30))
        }
        let channel = DuplexChannel { chunk in await progress.send(chunk) }
        return channels.withLock { c in
            guard c[invokeId] == nil else { return nil }
            c[invokeId] = channel
            return (channel, progress)
        }
    }

    private func runInvoke(_ req: GatewayProtocol.InvokeRequest, nodeId: String, dispatcher: Dispatcher,
                           duplex: (channel: DuplexChannel, progress: InvokeProgress)?) async {
        log.debug("invoke \(req.command) [\(req.id)]")
        // Its progress goes out as node.invoke.progress; its input comes in through `channels`.
        let beats = duplex.flatMap { d in
            dispatcher.registry.spec(req.command)?.duplex == true ? InvokeProgress.heartbeats(d.progress, d.channel) : nil
        }
        var result = await dispatcher.invoke(id: req.id, command: req.command, params: req.params, timeoutMs: req.timeoutMs,
                                             maxPayloadBytes: maxPayload, duplex: duplex?.channel ?? .detached())
        // No progress after this: the result is the invoke's last word.
        beats?.cancel()
        if let duplex {
            duplex.channel.end()
            channels.withLock { _ = $0.removeValue(forKey: req.id) }
        }
        if case .failure(let e) = result, e.code == .timeout, (req.timeoutMs ?? 0) > 0 {
            // The dispatcher's deadline is the gateway's timeoutMs: the gateway has already answered
            // the caller with a timeout, so a result now is noise.
            log.info("\(req.command) [\(req.id)] did not finish within its timeout; no result sent")
            return
        }
        let id = await pending.nextId("r")
        let structured = dispatcher.registry.spec(req.command)?.structuredResult == true
        var frame = GatewayProtocol.invokeResultFrame(frameId: id, id: req.id, nodeId: nodeId, result: result, structured: structured)
        // The payload limit of the gateway connection, checked on the frame itself (PayloadBudget).
        do throws(NodeError) { try PayloadBudget(maxPayloadBytes: maxPayload).check(frameBytes: frame.count, command: req.command) }
        catch {
            result = .failure(error)
            frame = GatewayProtocol.invokeResultFrame(frameId: id, id: req.id, nodeId: nodeId, result: result, structured: structured)
        }
        await pending.expect(id, timeout: .seconds(30))
        ws.send(textBytes: frame)
        if case .success(let p) = await pending.wait(id), p?["ignored"]?.boolValue == true {
            log.info("gateway ignored the result of \(req.command) [\(req.id)] (late or unknown id)")
        }
    }

    /// Checks that the peer still answers (after a network change): a WebSocket ping must bring
    /// some frame back within `timeout`, else the connection is closed so the client reconnects.
    func probe(timeout: Duration = .seconds(4)) async -> Bool {
        let sent = ContinuousClock.now
        ws.sendPing(Array("probe".utf8))
        if await lastFrame.frame(after: sent, within: timeout) { return true }
        log.info("the gateway did not answer a ping within \(timeout) after a network change; reconnecting")
        ws.close(code: 4001, reason: "network changed")
        return false
    }

    /// Sends `node.event`; returns the gateway's reply payload (nil on error/timeout). An answer of
    /// `handled: false` is the gateway's decision, not a failure: it is returned like any answer
    /// (so nothing sends the event again) and logged once per event and reason.
    func sendEvent(_ event: String, payload: JSONValue, timeout: Duration = .seconds(10)) async -> JSONValue? {
        let reply = await request("node.event", params: GatewayProtocol.nodeEvent(event, payload: payload), what: "node.event \(event)", timeout: timeout)
        if let reply, case let answer = GatewayProtocol.NodeEventAnswer(reply), !answer.handled {
            let key = event + "|" + (answer.reason ?? "")
            if unhandledLogged.withLock({ $0.insert(key).inserted }) {
                log.info("the gateway received \(event) but did not use it (\(answer.reason ?? "no reason given")); not sent again for that")
            }
        }
        return reply
    }

    /// Calls a gateway method a node may call (§4.8); the reply payload, or nil on error/timeout.
    func request(_ method: String, params: JSONValue, what: String? = nil, timeout: Duration = .seconds(10)) async -> JSONValue? {
        switch await call(method, params: params, timeout: timeout) {
        case .success(let p): return p
        case .failure(let e): log.info("\(what ?? method) not accepted: \(e)"); return nil
        }
    }

    /// Calls a gateway method; the reply payload, or the gateway's error (TIMEOUT when none came,
    /// UNAVAILABLE when the connection ended first), for callers that act on its details.
    func call(_ method: String, params: JSONValue, timeout: Duration = .seconds(10)) async -> Result<JSONValue, GatewayProtocol.GatewayError> {
        let id = await pending.nextId(method == "node.event" ? "e" : "r")
        await pending.expect(id, timeout: timeout)
        ws.send(text: GatewayProtocol.request(id: id, method: method, params: params).jsonString())
        return await pending.wait(id).map { $0 ?? .object([:]) }
    }
}

/// The time the last frame arrived, shared with the watchdog task; `frame(after:within:)` waits
/// for the next one without polling.
final class LockedInstant: Sendable {
    private struct State {
        var at = ContinuousClock.now
        var next: UInt64 = 0
        /// Callers of `frame(after:within:)` still waiting, with the instant a frame must follow.
        var waiters: [UInt64: (after: ContinuousClock.Instant, resume: CheckedContinuation<Bool, Never>)] = [:]
    }
    private let state = Locked(State())

    func touch() {
        let now = ContinuousClock.now
        let woken = state.withLock { s -> [CheckedContinuation<Bool, Never>] in
            s.at = now
            guard !s.waiters.isEmpty else { return [] }
            let due = s.waiters.filter { $0.value.after < now }
            for id in due.keys { s.waiters[id] = nil }
            return due.values.map(\.resume)
        }
        for c in woken { c.resume(returning: true) }
    }

    var age: Duration { state.withLock { ContinuousClock.now - $0.at } }
    var instant: ContinuousClock.Instant { state.withLock { $0.at } }

    /// True once a frame arrives after `instant` (resumed by `touch`), false when `timeout` passes
    /// first (resumed by a DeadlineTimer).
    func frame(after instant: ContinuousClock.Instant, within timeout: Duration) async -> Bool {
        await withCheckedContinuation { (c: CheckedContinuation<Bool, Never>) in
            let id: UInt64? = state.withLock { s in
                if s.at > instant { return nil }
                s.next += 1
                s.waiters[s.next] = (instant, c)
                return s.next
            }
            guard let id else { c.resume(returning: true); return }
            let state = self.state
            DeadlineTimer.shared.schedule(at: .now + timeout) {
                if let w = state.withLock({ $0.waiters.removeValue(forKey: id) }) { w.resume.resume(returning: false) }
            }
        }
    }
}
