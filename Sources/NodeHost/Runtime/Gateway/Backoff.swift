import Support

/// Reconnect delays: exponential from 0.5 s to a 30 s cap with ±50 % jitter (so a fleet of nodes
/// does not reconnect in lock-step after a gateway restart). Never zero: no tight loop.
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
