import Config
import Kit
import Support

/// Owns the current foreground/background state: samples the configured source (fresh when a
/// foreground-only command asks, and on a timer so transitions are logged), and holds the manual
/// override set by `openclaw-node presence foreground|background|auto`.
public actor PresenceMonitor: PresenceSource {
    public let mode: PresenceMode
    private let source: any PresenceSource
    private var override: Presence?
    private var last: PresenceSample
    private var lastSampledAt: ContinuousClock.Instant?
    private let maxSampleAge: Duration
    private let log: Logger
    private var pollTask: Task<Void, Never>?
    private var observers: [UInt64: AsyncStream<PresenceSample>.Continuation] = [:]
    private var nextObserver: UInt64 = 0

    public init(mode: PresenceMode, source: any PresenceSource, maxSampleAge: Duration = .milliseconds(250),
                log: Logger = Logger(component: "presence")) {
        self.mode = mode
        self.source = source
        self.maxSampleAge = maxSampleAge
        self.log = log
        self.last = PresenceSample(.foreground, "not sampled yet")
    }

    /// The current state, re-sampled when the last reading is older than `maxSampleAge`.
    public var current: Presence {
        get async { await refresh().presence }
    }

    public var reason: String { override != nil ? "set by `openclaw-node presence`" : last.reason }

    /// Samples the source now (or returns the override) and logs a transition.
    @discardableResult
    public func refresh() async -> PresenceSample {
        if let o = override { return PresenceSample(o, "set by `openclaw-node presence`") }
        if let at = lastSampledAt, ContinuousClock.now - at < maxSampleAge { return last }
        let s = await source.sample()
        lastSampledAt = .now
        record(s)
        return s
    }

    /// As a `PresenceSource` (what bundles and the dispatcher ask): the same as `refresh()`.
    public func sample() async -> PresenceSample { await refresh() }

    /// `presence foreground|background` pins the state; nil (`presence auto`) returns to the source.
    public func setOverride(_ p: Presence?) async {
        override = p
        if let p {
            record(PresenceSample(p, "set by `openclaw-node presence`"))
        } else {
            lastSampledAt = nil
            await refresh()
        }
    }

    public var overrideValue: Presence? { override }

    /// Re-samples every `interval` so transitions are logged (and sent as events) even when idle.
    public func startPolling(every interval: Duration = .seconds(2)) {
        guard pollTask == nil else { return }
        pollTask = Task { [weak self] in
            while !Task.isCancelled {
                await self?.refresh()
                try? await Task.sleep(for: interval)
            }
        }
    }

    public func stop() {
        pollTask?.cancel()
        pollTask = nil
        for c in observers.values { c.finish() }
        observers.removeAll()
    }

    /// Transitions, as they happen.
    public func transitions() -> AsyncStream<PresenceSample> {
        let (stream, cont) = AsyncStream<PresenceSample>.makeStream(bufferingPolicy: .bufferingNewest(8))
        let id = nextObserver
        nextObserver += 1
        observers[id] = cont
        cont.onTermination = { [weak self] _ in Task { await self?.removeObserver(id) } }
        return stream
    }

    private func removeObserver(_ id: UInt64) { observers[id] = nil }

    private func record(_ s: PresenceSample) {
        let changed = s.presence != last.presence || last.reason == "not sampled yet"
        last = s
        guard changed else { return }
        log.info("presence is now \(s.presence.rawValue) (\(s.reason))")
        for c in observers.values { c.yield(s) }
    }
}
