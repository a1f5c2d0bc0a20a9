import Config
import Glibc
import Kit
import Support

/// The node's one connection to gpsd and everything learned from it: connection status, device
/// list, the latest fix (the cache location.get answers from), and the requests waiting for a
/// fix. The socket itself lives on `GpsdWatcher`'s thread; its events are applied here in order.
actor GpsdClient {
    enum Status: Sendable, Equatable {
        case idle
        case connecting
        case connected
        case unreachable(String)
    }

    /// How a wait for a fix ended.
    enum FixWait: Sendable {
        case fix(GpsFix)
        /// The deadline passed; `best` is the fallback candidate, if the mode allows one.
        case timedOut(best: GpsFix?)
        case unreachable(String)
        case cancelled
    }

    /// What gpsd last said, for error messages ("2D fix ±228 m, 3 of 9 satellites used").
    struct Snapshot: Sendable {
        var status: Status
        var version: String?
        var devices: [String]?
        var latestFix: GpsFix?
        var lastMode: Int?
        var satellitesSeen: Int?
        var satellitesUsed: Int?
        var malformedLines: Int
    }

    private struct Waiter {
        let accuracy: LocationAccuracy
        /// Fixes read from the socket before this are not "new" (they were the cache's to give).
        let since: ContinuousClock.Instant
        var best: GpsFix?
        let continuation: CheckedContinuation<FixWait, Never>
        var timer: Task<Void, Never>?
    }

    nonisolated let endpoint: GpsdEndpoint
    private let timing: GpsdWatcher.Timing
    private let log: Logger
    private var watcher: GpsdWatcher?
    private var pump: Task<Void, Never>?

    private(set) var status: Status = .idle
    private var version: String?
    /// Device paths gpsd reported; nil until its first DEVICES report on this connection.
    private(set) var devices: [String]?
    /// gpsd answered our ?WATCH (DEVICES or WATCH seen), so `devices` can be trusted.
    private var watchAnswered = false
    private(set) var latestFix: GpsFix?
    private var lastMode: Int?
    private var lastSky: GpsdMessage.Sky?
    private var lastGST: GpsdMessage.GST?
    private var malformedLines = 0
    private var loggedUnreachable = false

    private var nextId: UInt64 = 0
    private var waiters: [UInt64: Waiter] = [:]
    private var statusWaiters: [UInt64: (continuation: CheckedContinuation<Void, Never>, timer: Task<Void, Never>)] = [:]
    private var subscribers: [UInt64: AsyncStream<GpsFix>.Continuation] = [:]

    init(endpoint: GpsdEndpoint, timing: GpsdWatcher.Timing = .init(), log: Logger = Logger(component: "location")) {
        self.endpoint = endpoint
        self.timing = timing
        self.log = log
    }

    /// A client dropped without `stop()` must not leave its thread and connection behind.
    deinit { watcher?.stop() }

    // MARK: lifecycle

    /// Starts the background watch (idempotent). It runs until `stop()`, reconnecting as needed.
    func start() {
        guard watcher == nil else { return }
        let (stream, continuation) = AsyncStream.makeStream(of: WatchEvent.self, bufferingPolicy: .bufferingNewest(10_000))
        let w = GpsdWatcher(host: endpoint.host, port: endpoint.port, timing: timing) { continuation.yield($0) }
        watcher = w
        status = .connecting
        pump = Task { [weak self] in
            for await event in stream { await self?.handle(event) }
        }
        w.start()
    }

    func stop() {
        watcher?.stop()
        watcher = nil
        pump?.cancel()
        pump = nil
        status = .idle
        for id in Array(waiters.keys) { finish(id, .unreachable("the location capability stopped")) }
        wakeStatusWaiters()
        for (_, s) in subscribers { s.finish() }
        subscribers.removeAll()
    }

    var snapshot: Snapshot {
        Snapshot(status: status, version: version, devices: devices, latestFix: latestFix, lastMode: lastMode,
                 satellitesSeen: lastSky?.seen, satellitesUsed: lastSky?.used, malformedLines: malformedLines)
    }

    /// How many location.get calls are waiting for a fix now (tests wait for one before they send it).
    var waitingCount: Int { waiters.count }

    // MARK: waiting

    /// True once connected and gpsd has answered the watch (so its device list is known).
    var isReady: Bool { status == .connected && watchAnswered }

    /// Returns once ready (connected, watch answered), or once a connect attempt made after this
    /// call failed, or at `deadline`. Cuts any reconnect backoff short, so a restarted gpsd is
    /// picked up at once.
    func awaitConnection(until deadline: ContinuousClock.Instant) async -> Status {
        while !isReady && status != .idle && ContinuousClock.now < deadline {
            // Woken by: watch answered, a failed connect attempt, or the deadline.
            await waitForStatusChange(until: deadline)
            if case .unreachable = status { break }
        }
        return status
    }

    private func waitForStatusChange(until deadline: ContinuousClock.Instant) async {
        let id = allocateId()
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            let timer = Task { [weak self] in
                try? await Task.sleep(until: deadline, clock: .continuous)
                await self?.resumeStatusWaiter(id)
            }
            statusWaiters[id] = (c, timer)
            if status != .connected { watcher?.reconnectNow() }
        }
    }

    /// Waits for a fix received at or after `since` that `accuracy` accepts, until `deadline`.
    func waitForFix(accuracy: LocationAccuracy, since: ContinuousClock.Instant = .now,
                    until deadline: ContinuousClock.Instant) async -> FixWait {
        let id = allocateId()
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (c: CheckedContinuation<FixWait, Never>) in
                if Task.isCancelled { c.resume(returning: .cancelled); return }
                if case .unreachable(let why) = status { c.resume(returning: .unreachable(why)); return }
                var w = Waiter(accuracy: accuracy, since: since, best: nil, continuation: c, timer: nil)
                w.timer = Task { [weak self] in
                    try? await Task.sleep(until: deadline, clock: .continuous)
                    await self?.expire(id)
                }
                waiters[id] = w
            }
        } onCancel: {
            Task { [weak self] in await self?.finish(id, .cancelled) }
        }
    }

    /// Every new fix, for as long as the caller iterates (significant-change monitoring).
    func fixes() -> AsyncStream<GpsFix> {
        let id = allocateId()
        let (stream, continuation) = AsyncStream.makeStream(of: GpsFix.self, bufferingPolicy: .bufferingNewest(16))
        subscribers[id] = continuation
        continuation.onTermination = { _ in Task { [weak self] in await self?.removeSubscriber(id) } }
        return stream
    }

    // MARK: events from the watch thread

    func handle(_ event: WatchEvent) {
        switch event {
        case .connecting:
            status = .connecting
        case .connected:
            status = .connected
            devices = nil
            watchAnswered = false
            log.info("connected to gpsd at \(endpoint)")
            loggedUnreachable = false
        case .disconnected(let why):
            status = .connecting
            devices = nil
            log.warn("lost gpsd at \(endpoint) (\(why)); reconnecting")
        case .unreachable(let why):
            status = .unreachable(why)
            devices = nil
            // Logged once per outage, not per retry.
            if !loggedUnreachable {
                loggedUnreachable = true
                log.warn("gpsd not reachable at \(endpoint) (\(why)); location.get answers LOCATION_UNAVAILABLE until it is")
            }
            wakeStatusWaiters()
            for id in Array(waiters.keys) { finish(id, .unreachable(why)) }
        case .malformed(let preview):
            malformedLines += 1
            log.debug("ignored a line from gpsd that is not a JSON report: \(preview)")
        case .message(let m, let at, let wall):
            apply(m, receivedAt: at, wallTime: wall)
        }
    }

    private func apply(_ message: GpsdMessage, receivedAt: ContinuousClock.Instant, wallTime: WallTime) {
        switch message {
        case .version(let release, let major, let minor):
            version = release
            log.info("gpsd \(release) (protocol \(major.map(String.init) ?? "?").\(minor.map(String.init) ?? "?")) at \(endpoint)")
        case .devices(let list):
            devices = list
            watchAnswered = true
            wakeStatusWaiters()
            if list.isEmpty { log.warn("gpsd at \(endpoint) has no GPS device") }
            else { log.info("gpsd devices: \(list.joined(separator: ", "))") }
        case .device(let path, let active):
            var list = devices ?? []
            list.removeAll { $0 == path }
            if active { list.append(path) }
            devices = list
        case .sky(let sky):
            lastSky = sky
        case .gst(let gst):
            lastGST = gst
        case .watch:
            watchAnswered = true
            wakeStatusWaiters()
        case .error(let text):
            log.warn("gpsd at \(endpoint) reported an error: \(text)")
        case .other:
            break
        case .tpv(let tpv):
            lastMode = tpv.mode
            guard let fix = GpsFix(tpv: tpv, gst: lastGST, receivedAt: receivedAt, receivedWallTime: wallTime) else { return }
            latestFix = fix
            offer(fix)
            for (_, s) in subscribers { s.yield(fix) }
        }
    }

    private func offer(_ fix: GpsFix) {
        for (id, w) in waiters where fix.receivedAt >= w.since {
            if w.accuracy.accepts(fix) {
                finish(id, .fix(fix))
            } else if w.accuracy.acceptsAsFallback(fix), w.best.map({ LocationAccuracy.better(fix, than: $0) }) ?? true {
                waiters[id]?.best = fix
            }
        }
    }

    // MARK: bookkeeping

    private func allocateId() -> UInt64 { nextId += 1; return nextId }

    private func expire(_ id: UInt64) {
        guard let w = waiters[id] else { return }
        finish(id, .timedOut(best: w.best))
    }

    private func finish(_ id: UInt64, _ result: FixWait) {
        guard let w = waiters.removeValue(forKey: id) else { return }
        w.timer?.cancel()
        w.continuation.resume(returning: result)
    }

    private func wakeStatusWaiters() {
        let all = statusWaiters
        statusWaiters.removeAll()
        for (_, w) in all { w.timer.cancel(); w.continuation.resume() }
    }

    private func resumeStatusWaiter(_ id: UInt64) {
        statusWaiters.removeValue(forKey: id)?.continuation.resume()
    }

    private func removeSubscriber(_ id: UInt64) { subscribers.removeValue(forKey: id) }
}
