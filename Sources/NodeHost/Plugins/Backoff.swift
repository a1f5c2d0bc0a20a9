import Support

/// Restart delays (a crashing plugin): exponential from `initial` to `cap` with ±50 % jitter.
/// Never zero: no tight loop. Gateway reconnects do not use it: they follow ReconnectPolicy
/// (docs/PROTOCOL.md §3.8), OpenClaw's own deterministic 1 s → 30 s.
public struct Backoff: Sendable {
    public let initial: Duration
    public let cap: Duration
    private(set) var attempt = 0

    public init(initial: Duration = .milliseconds(500), cap: Duration = .seconds(30)) {
        self.initial = initial; self.cap = cap
    }

    public mutating func next() -> Duration {
        let base = min(Double(initial.milliseconds) * pow2(attempt), Double(cap.milliseconds))
        attempt = min(attempt + 1, 30)
        let jittered = base * Double.random(in: 0.5...1.0)
        return .milliseconds(max(Int64(jittered), 100))
    }

    public mutating func reset() { attempt = 0 }

    private func pow2(_ n: Int) -> Double { Double(1 << min(n, 20)) }
}
