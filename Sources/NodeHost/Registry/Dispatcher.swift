import Config
import Glibc
import HostPresence
import Kit
import Support

/// Runs one invoke through the gates, in order (docs/ARCHITECTURE.md "The path of one invoke"):
/// unknown → disabled → unavailable → background → params → duplicate id → in-flight limit →
/// handler under a deadline. The gateway session and the local control socket both call this,
/// so `openclaw-node invoke` exercises exactly the path a gateway invoke takes.
public actor Dispatcher {
    /// The command table in force. A config reload (SIGHUP) installs a new one; an invoke uses the
    /// table it found at its start, so one already running finishes on the capability it began on.
    public nonisolated var registry: CommandRegistry { table.withLock { $0 } }
    private nonisolated let table: Locked<CommandRegistry>
    private let presence: PresenceMonitor
    public nonisolated let maxInFlight: Int
    /// Used when the request carries no timeoutMs (the gateway's own default).
    public nonisolated let defaultTimeoutMs: Int
    private var inFlight: [String: (task: Task<Void, Never>, reply: ReplyOnce, command: String)] = [:]
    /// Every answered invoke, counted for the metrics endpoint.
    public nonisolated let stats = InvokeStats()
    /// Set by `cancelAll` (the node is stopping): invokes that arrive afterwards are refused with
    /// NODE_NOT_READY before anything of them runs, so the gateway may send them again elsewhere.
    private var stopping: String?
    /// Cancels that came for an invoke whose request arrived but which is not running yet (its
    /// task had not reached `invoke`): it answers CANCELLED as soon as it gets here. A few only.
    private var cancelledEarly: [String] = []
    private let log: Logger

    public init(registry: CommandRegistry, presence: PresenceMonitor, maxInFlight: Int = 8,
                defaultTimeoutMs: Int = 30_000, log: Logger = Logger(component: "dispatch")) {
        self.table = Locked(registry)
        self.presence = presence
        self.maxInFlight = maxInFlight
        self.defaultTimeoutMs = defaultTimeoutMs
        self.log = log
    }

    public var inFlightCount: Int { inFlight.count }
    /// The commands running now, for a person ("system.run, camera.clip").
    public var inFlightCommands: [String] { inFlight.values.map(\.command).sorted() }

    /// Puts a reloaded command table in force for the invokes that start from now on.
    public nonisolated func install(_ registry: CommandRegistry) { table.withLock { $0 = registry } }

    /// Asked when an invoke finds its capability unavailable: probe it again now and put what is
    /// found in force (the daemon does, in order with config reloads); true when it serves now.
    /// A desktop session or a camera that appeared after the node started is used at once, not
    /// after the next periodic probe. nil: the refusal stands (the CLI's own dispatcher).
    private var probeAgain: (@Sendable (String) async -> Bool)?
    public func setProbeAgain(_ probe: @escaping @Sendable (String) async -> Bool) { probeAgain = probe }

    /// Runs `command` and returns its payload or error. Never throws: every failure is a NodeError.
    /// `maxPayloadBytes` is what the caller's transport accepts (a gateway's `policy.maxPayload`,
    /// the control socket's own limit): handlers fit media to it; the transport checks the frame.
    /// The deadline (`timeoutMs`, else `defaultTimeoutMs`) is enforced here and only here: a call
    /// still running then is cancelled and answers TIMEOUT.
    /// `duplex`: the invoke's progress and input channel (a gateway invoke's; detached otherwise).
    public func invoke(id: String, command: String, params: InvokeParams, timeoutMs: Int?,
                       maxPayloadBytes: Int, duplex: DuplexChannel = .detached()) async -> Result<JSONValue, NodeError> {
        let started = ContinuousClock.now
        let result = await run(id: id, command: command, params: params, timeoutMs: timeoutMs, maxPayloadBytes: maxPayloadBytes, duplex: duplex)
        let outcome: String
        switch result {
        case .success: outcome = "ok"
        case .failure(let e): outcome = e.code.rawValue
        }
        stats.record(command: registry.spec(command) == nil ? "other" : command, outcome: outcome,
                     seconds: (ContinuousClock.now - started).seconds)
        return result
    }

    private func run(id: String, command: String, params: InvokeParams, timeoutMs: Int?,
                     maxPayloadBytes: Int, duplex: DuplexChannel) async -> Result<JSONValue, NodeError> {
        if let early = cancelledEarly.firstIndex(of: id) {
            cancelledEarly.remove(at: early)
            return .failure(NodeError(.cancelled, "cancelled by the gateway before it started"))
        }
        if let stopping {
            return .failure(NodeError(.nodeNotReady, "\(stopping); nothing of \(command) ran", retryable: true))
        }
        var gated = gate(command)
        if case .failure = gated, let probeAgain, let name = registry.spec(command)?.capability,
           registry.probeable.contains(name), await probeAgain(name) {
            gated = gate(command)
        }
        let spec: CommandSpec
        switch gated {
        case .failure(let e): return .failure(e)
        case .success(let s): spec = s
        }
        if spec.requiresForeground {
            do { try await presence.requireForeground(command) } catch { return .failure(error) }
        }
        guard let prepare = spec.prepare else {
            return .failure(NodeError(.unavailable(spec.capability), "\(spec.capability) is not loaded"))
        }
        let call: CommandSpec.Call
        do { call = try prepare(params) } catch { return .failure(error) }

        guard inFlight[id] == nil else {
            return .failure(.invalidRequest("duplicate active request id \(id)"))
        }
        guard inFlight.count < maxInFlight else {
            return .failure(NodeError(.nodeBusy, "\(maxInFlight) commands already running; retry shortly", retryable: true))
        }

        let timeout = timeoutMs ?? defaultTimeoutMs
        let deadline: ContinuousClock.Instant? = timeout > 0 ? .now + .milliseconds(timeout) : nil
        let context = InvocationContext(invokeId: id, command: command, deadline: deadline, maxPayloadBytes: maxPayloadBytes,
                                        duplex: duplex)
        let reply = ReplyOnce()

        let work = Task {
            let result: Result<JSONValue, NodeError>
            do throws(NodeError) { result = .success(try await call(context)) }
            catch { result = .failure(error) }
            reply.resolve(result)
        }
        inFlight[id] = (work, reply, command)
        // Disarmed as soon as the reply is in (DeadlineTimer explains why this is not a Task.sleep).
        let timer = deadline.map { deadline in
            DeadlineTimer.shared.schedule(at: deadline) {
                if reply.resolve(.failure(NodeError(.timeout, "\(command) did not finish within \(timeout) ms"))) {
                    work.cancel()
                }
            }
        }
        // A caller that stops waiting (its gateway connection ended) cancels the work too: the
        // cancellation reaches the handler's blocking job and raises its CancelFlag.
        let result = await withTaskCancellationHandler {
            await reply.value()
        } onCancel: {
            if reply.resolve(.failure(NodeError(.cancelled, "its caller went away (the gateway connection ended, or a local client cancelled or hung up)"))) {
                work.cancel()
            }
        }
        if let timer { DeadlineTimer.shared.cancel(timer) }
        inFlight[id] = nil
        if case .failure(let e) = result { log.info("\(command) [\(id)] failed: \(e.message)") }
        return result
    }

    /// Aborts a running invoke (gateway `node.invoke.cancel`); it answers "CANCELLED", or `error`
    /// (a duplex invoke whose input overflowed). Its task's cancellation ends what the handler
    /// started (a process tree, a held key, a stream) through its CancelFlag and waits.
    /// `arrived`: the caller knows the invoke's request came in, so a cancel that finds it not
    /// running yet is kept for it.
    public func cancel(id: String, error: NodeError = NodeError(.cancelled, "cancelled by the gateway"), arrived: Bool = false) {
        guard let running = inFlight[id] else {
            if arrived, !cancelledEarly.contains(id) { cancelledEarly = Array((cancelledEarly + [id]).suffix(16)) }
            return
        }
        if running.reply.resolve(.failure(error)) { running.task.cancel() }
    }

    /// Whether an invoke with this id is running (a `node.invoke.cancel` for another is ignored).
    public func isRunning(_ id: String) -> Bool { inFlight[id] != nil }

    /// Cancels every running invoke (the daemon is stopping): each answers CANCELLED, and its
    /// task's cancellation raises the CancelFlag its blocking job waits on, so a long system.run,
    /// a held key or a recording ends now instead of holding up the shutdown.
    /// The node is about to restart (an update): when nothing runs, from now on every invoke is
    /// refused with NODE_NOT_READY (retryable: the gateway sends it again after the reconnect) and
    /// true is returned; when something runs, nothing changes and false is returned. One step, so
    /// no invoke can slip in between the check and the refusal.
    public func drain(_ why: String) -> Bool {
        guard inFlight.isEmpty, stopping == nil else { return false }
        stopping = why
        return true
    }

    public func cancelAll(_ why: String) {
        stopping = why
        for (_, running) in inFlight where running.reply.resolve(.failure(NodeError(.cancelled, why))) {
            running.task.cancel()
        }
    }

    /// The static gates: unknown, disabled, unavailable.
    private func gate(_ command: String) -> Result<CommandSpec, NodeError> {
        let registry = self.registry
        // A capability that is not loaded (disabled, its bundle missing or refused) still has its
        // manifest's rows, so its commands reach the refusal below with the reason.
        guard let spec = registry.spec(command), let entry = registry.entry(forCapability: spec.capability) else {
            return .failure(.invalidRequest("unknown command \"\(command)\" (see `openclaw-node caps`)"))
        }
        if let refusal = refusal(entry) { return .failure(refusal) }
        return .success(spec)
    }

    /// <CAP>_DISABLED or <CAP>_UNAVAILABLE for a capability that cannot serve now.
    private func refusal(_ entry: CommandRegistry.Entry) -> NodeError? {
        let name = entry.capability.name
        if !entry.enabled {
            return NodeError(.disabled(name),
                "\(name) is disabled on this node (set capabilities.\(name).enabled: true)")
        }
        if case .unavailable(let why) = entry.availability {
            return NodeError(.unavailable(name), why)
        }
        return nil
    }
}

/// A reply slot that the handler and the deadline race to fill; the first one wins.
final class ReplyOnce: Sendable {
    private struct State {
        var result: Result<JSONValue, NodeError>?
        var waiter: CheckedContinuation<Result<JSONValue, NodeError>, Never>?
    }
    private let state = Locked(State())

    /// Returns true if this call provided the answer.
    @discardableResult
    func resolve(_ r: Result<JSONValue, NodeError>) -> Bool {
        let (won, waiter) = state.withLock { s -> (Bool, CheckedContinuation<Result<JSONValue, NodeError>, Never>?) in
            guard s.result == nil else { return (false, nil) }
            s.result = r
            defer { s.waiter = nil }
            return (true, s.waiter)
        }
        waiter?.resume(returning: r)
        return won
    }

    func value() async -> Result<JSONValue, NodeError> {
        await withCheckedContinuation { c in
            let ready = state.withLock { s -> Result<JSONValue, NodeError>? in
                if s.result == nil { s.waiter = c }
                return s.result
            }
            if let ready { c.resume(returning: ready) }
        }
    }
}
