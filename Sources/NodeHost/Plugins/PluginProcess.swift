import Config
import Glibc
import Kit
import Registry
import Support

/// One running plugin: spawns it, speaks newline-delimited JSON over its stdin/stdout, matches
/// results to invokes, restarts it with backoff after a crash and gives up after repeated crashes.
/// Nothing a plugin prints or does (garbage, huge lines, hanging, exiting) can stop the node or
/// other commands: every wait is bounded by the invoke's deadline.
actor PluginProcess {
    static let protocolVersion = 1
    static let maxLineBytes = 32 * 1024 * 1024
    static let helloTimeout: Duration = .seconds(10)
    /// The plugin process ended with invokes still waiting (the plugin host's own code).
    static let crashed: NodeError.Code = "PLUGIN_CRASHED"
    static let maxCrashes = 5
    static let crashWindow: Duration = .seconds(60)

    let manifest: PluginManifest
    private let config: JSONValue
    private nonisolated let log: Logger
    private var child: Subprocess?
    private var helloWaiter: CheckedContinuation<Bool, Never>?
    private var ready = false
    private var pending: [String: CheckedContinuation<Result<JSONValue, NodeError>, Never>] = [:]
    private var crashes: [ContinuousClock.Instant] = []
    private var restartBackoff = Backoff(initial: .seconds(1), cap: .seconds(30))
    private var stopping = false
    /// The pending restart after a crash; stop cancels it.
    private var restartTask: Task<Void, Never>?
    private(set) var gaveUp: String?
    private let eventSink: AsyncStream<CapabilityEvent>.Continuation
    /// Events go to the gateway, logs to the journal: a plugin gets a fair share of each.
    private var eventLimit = RateLimiter(perSecond: PluginProcess.eventsPerSecond, burst: 100)
    private var logLimit = RateLimiter(perSecond: 20, burst: 100)
    static let eventsPerSecond: Double = 20
    /// Lines of stdout read per second at most (results, events and logs together).
    static let linesPerSecond: Double = 500
    nonisolated let events: AsyncStream<CapabilityEvent>

    init(manifest: PluginManifest, config: JSONValue) {
        self.manifest = manifest
        self.config = config
        self.log = Logger(component: "plugin \(manifest.id)")
        (events, eventSink) = AsyncStream<CapabilityEvent>.makeStream(bufferingPolicy: .bufferingNewest(256))
    }

    var status: String {
        if let gaveUp { return "stopped: \(gaveUp)" }
        return ready ? "running (pid \(child?.pid ?? 0))" : "not started"
    }

    // MARK: lifecycle

    /// Starts the plugin if it is not running and waits for its hello.
    func ensureStarted() async throws(NodeError) {
        if ready { return }
        if let gaveUp { throw NodeError(.unavailable("plugin"), "plugin \(manifest.id) \(gaveUp)") }
        if child == nil { try spawn() }
        let ok = await withCheckedContinuation { (c: CheckedContinuation<Bool, Never>) in
            if ready { c.resume(returning: true); return }
            helloWaiter = c
            let id = manifest.id
            DeadlineTimer.shared.schedule(at: .now + Self.helloTimeout) { [weak self] in
                Task { await self?.helloTimedOut(id) }
            }
        }
        guard ok else { throw NodeError(.unavailable("plugin"), "plugin \(manifest.id) did not say hello within \(Self.helloTimeout)") }
    }

    private func helloTimedOut(_ id: String) {
        guard let w = helloWaiter else { return }
        helloWaiter = nil
        w.resume(returning: false)
        log.warn("no hello within \(Self.helloTimeout); stopping it")
        child?.signal(SIGKILL)
    }

    private func spawn() throws(NodeError) {
        // Checked again at every (re)start: files and links can change after the node read them, and
        // a plugin restarted after a crash must be the one that was trusted.
        do throws(PluginManifest.Invalid) {
            let now = try PluginManifest.load(directory: manifest.directory)
            guard now == manifest else {
                throw PluginManifest.Invalid(description: "its plugin.json5, executable or directory changed since the node started (\(now.realDirectory)); restart the node (or reload) to take the new one")
            }
        } catch {
            gaveUp = "is not restarted: \(error.description)"
            throw NodeError(.unavailable("plugin"), "plugin \(manifest.id) \(gaveUp!)")
        }
        let p: Subprocess
        do {
            // In its own (real) directory, so that a script named relative to it (args) is the one checked.
            p = try Subprocess.spawn(manifest.executable, manifest.args, stdin: .pipe, stdout: .pipe, stderr: .pipe,
                                     workingDirectory: manifest.realDirectory)
        } catch {
            throw NodeError(.unavailable("plugin"), "plugin \(manifest.id): \(error.description)")
        }
        child = p
        log.info("started \(manifest.executable) (pid \(p.pid))")
        startReaders(p)
        send(["type": "hello", "protocol": .number(Double(Self.protocolVersion)), "plugin": .string(manifest.id),
              "config": config, "node": ["version": .string(NodeVersion.version)]])
    }

    private nonisolated func startReaders(_ p: Subprocess) {
        BlockingExecutor.startLoop(name: "plugin-stdout") { [weak self] in
            var buffer = LineSplitter(maxLineBytes: PluginProcess.maxLineBytes)
            // A plugin that writes faster than this is read at this pace: the pipe fills and the
            // plugin waits in write(2), instead of the node spending a core on lines it would drop.
            var pace = RateLimiter(perSecond: PluginProcess.linesPerSecond, burst: PluginProcess.linesPerSecond * 2)
            var slowed = false
            // availableData returns what the pipe has; read(upToCount:) would wait for a full buffer.
            while let chunk = p.stdout?.availableData, !chunk.isEmpty {
                for line in buffer.take(chunk) {
                    while !pace.allow() {
                        if !slowed { slowed = true; self?.log.warn("writes more than \(Int(PluginProcess.linesPerSecond)) lines per second; reading it at that pace") }
                        // Pacing, not polling: sleeps exactly until the limiter has a token again.
                        Pause.for(.milliseconds(max(1, pace.untilNextToken.milliseconds)))
                    }
                    self?.deliver(line)
                }
                if buffer.dropped > 0 { self?.deliverOversize(buffer.dropped); buffer.dropped = 0 }
            }
            let code = p.wait()
            self?.deliverExit(p.pid, code)
        }
        BlockingExecutor.startLoop(name: "plugin-stderr") { [weak self, id = manifest.id] in
            var buffer = LineSplitter(maxLineBytes: 64 * 1024)
            let log = Logger(component: "plugin \(id)")
            while let chunk = p.stderr?.availableData, !chunk.isEmpty {
                for line in buffer.take(chunk) where !line.isEmpty { log.info("stderr: \(line.prefix(2000))") }
            }
            _ = self
        }
    }

    /// Called on the reader thread; keeps lines in order by waiting for each to be handled.
    private nonisolated func deliver(_ line: String) {
        let done = Locked(false)
        // This thread owns the task: it waits for it to end.
        let task = Task { await self.handle(line); done.update { $0 = true } }
        done.wait(until: { $0 })
        _ = task
    }

    private nonisolated func deliverOversize(_ n: Int) {
        log.warn("dropped \(n) output line(s) longer than \(PluginProcess.maxLineBytes) bytes")
    }

    private nonisolated func deliverExit(_ pid: Int32, _ code: Int32) {
        Task { await self.exited(pid: pid, code: code) }
    }

    private func exited(pid: Int32, code: Int32) {
        guard child?.pid == pid else { return }
        child = nil
        ready = false
        if let w = helloWaiter { helloWaiter = nil; w.resume(returning: false) }
        for c in pending.values { c.resume(returning: .failure(NodeError(Self.crashed, "plugin \(manifest.id) exited (code \(code)) before answering"))) }
        pending.removeAll()
        if stopping { return }
        let now = ContinuousClock.now
        crashes = crashes.filter { now - $0 < Self.crashWindow } + [now]
        if crashes.count >= Self.maxCrashes {
            gaveUp = "crashed \(crashes.count) times within \(Self.crashWindow) (last exit code \(code)); fix it and restart the node"
            log.error(gaveUp!)
            return
        }
        let delay = restartBackoff.next()
        log.warn("exited with code \(code); restarting in \(delay)")
        restartTask = Task {
            try? await Task.sleep(for: delay)
            self.restartAfterCrash()
        }
    }

    private func restartAfterCrash() {
        guard !stopping, gaveUp == nil, child == nil else { return }
        do { try spawn() } catch { log.error(error.message) }
    }

    func stop() {
        stopping = true
        restartTask?.cancel()
        restartTask = nil
        ready = false
        gaveUp = gaveUp ?? "was stopped (the node is stopping or its config changed)"
        if let c = child {
            child = nil
            c.terminate(grace: .seconds(3))
        }
        // Calls still waiting for this process get an answer instead of waiting out their deadline.
        let waiting = pending
        pending.removeAll()
        for (_, c) in waiting { c.resume(returning: .failure(NodeError(.unavailable("plugin"), "plugin \(manifest.id) was stopped"))) }
        eventSink.finish()
    }

    // MARK: messages

    private func send(_ msg: JSONValue) {
        guard let h = child?.stdin else { return }
        try? h.write(Array((msg.jsonString() + "\n").utf8))
    }

    private func handle(_ line: String) {
        guard let v = JSONValue.parse(line), case .object = v, let type = v["type"]?.stringValue else {
            if !line.trimmed().isEmpty { log.warn("ignoring output that is not a protocol message: \(line.prefix(200))") }
            return
        }
        switch type {
        case "hello":
            ready = true
            restartBackoff.reset()
            log.info("ready (protocol \(v["protocol"]?.intValue ?? 0))")
            if let w = helloWaiter { helloWaiter = nil; w.resume(returning: true) }
        case "result":
            guard let id = v["id"]?.stringValue, let c = pending.removeValue(forKey: id) else { return }
            if v["ok"]?.boolValue == true {
                c.resume(returning: .success(v["payload"] ?? .null))
            } else {
                let code = v["error"]?["code"]?.stringValue ?? NodeError.Code.unavailable.rawValue
                c.resume(returning: .failure(NodeError(NodeError.Code(rawValue: code), v["error"]?["message"]?.stringValue ?? "plugin error")))
            }
        case "event":
            if let n = eventLimit.takeDropped() {
                log.warn("dropped \(n) events: the plugin sends more than \(Int(Self.eventsPerSecond)) per second")
            }
            guard eventLimit.allow() else { return }
            if let name = v["event"]?.stringValue { eventSink.yield(CapabilityEvent(.custom(name), payload: v["payload"] ?? .object([:]))) }
        case "log":
            if let n = logLimit.takeDropped() { log.warn("dropped \(n) log lines: the plugin logs more than 20 per second") }
            guard logLimit.allow() else { return }
            let msg = v["message"]?.stringValue ?? ""
            switch v["level"]?.stringValue { case "error": log.error(msg); case "warn": log.warn(msg); case "debug": log.debug(msg); default: log.info(msg) }
        default:
            log.debug("ignoring message type \(type)")
        }
    }

    // MARK: invoke

    func invoke(id: String, command: String, params: JSONValue, deadline: ContinuousClock.Instant?) async throws(NodeError) -> JSONValue {
        try await ensureStarted()
        let deadlineMs = InvokeDeadline(deadline).timeLeft.map { max(0, $0.milliseconds) }
        var msg: [String: JSONValue] = ["type": "invoke", "id": .string(id), "command": .string(command), "params": params]
        if let d = deadlineMs { msg["deadlineMs"] = .number(Double(d)) }
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (c: CheckedContinuation<Result<JSONValue, NodeError>, Never>) in
                pending[id] = c
                send(.object(msg))
            }
        } onCancel: {
            Task { await self.cancel(id) }
        }
        return try result.get()
    }

    private func cancel(_ id: String) {
        guard let c = pending.removeValue(forKey: id) else { return }
        send(["type": "cancel", "id": .string(id)])
        c.resume(returning: .failure(NodeError(.cancelled, "cancelled")))
    }
}
