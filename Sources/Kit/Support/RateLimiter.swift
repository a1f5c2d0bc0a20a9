/// A token bucket: at most `perSecond` on average, in bursts of up to `burst`. A plugin's events
/// and log lines each pass one, so a plugin that floods its stdout floods neither the gateway nor
/// the journal (MCP servers' notifications too); what it drops is counted so the log can say how much.
public struct RateLimiter: Sendable {
    public let perSecond: Double
    public let burst: Double
    private var tokens: Double
    private var last: ContinuousClock.Instant
    /// Dropped since the last `takeDropped`.
    public private(set) var dropped = 0
    /// nil until the first report: the first drop is reported at once, later ones in batches.
    private var lastReport: ContinuousClock.Instant?

    public init(perSecond: Double, burst: Double, now: ContinuousClock.Instant = .now) {
        self.perSecond = perSecond
        self.burst = burst
        tokens = burst
        last = now
    }

    public mutating func allow(now: ContinuousClock.Instant = .now) -> Bool {
        let elapsed = now - last
        last = now
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        tokens = min(burst, tokens + seconds * perSecond)
        guard tokens >= 1 else { dropped += 1; return false }
        tokens -= 1
        return true
    }

    /// How long until `allow` has a token again (as of the last `allow`); zero when it has one.
    public var untilNextToken: Duration {
        tokens >= 1 ? .zero : .nanoseconds(Int64(((1 - tokens) / perSecond * 1e9).rounded(.up)))
    }

    /// The drop count, at most once per `every`, to be logged (and reset).
    public mutating func takeDropped(every: Duration = .seconds(10), now: ContinuousClock.Instant = .now) -> Int? {
        guard dropped > 0, lastReport.map({ now - $0 >= every }) ?? true else { return nil }
        defer { dropped = 0; lastReport = now }
        return dropped
    }
}
