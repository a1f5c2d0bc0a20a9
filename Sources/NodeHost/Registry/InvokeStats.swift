import Support

/// What the dispatcher has answered since the daemon started, for the metrics endpoint: a count
/// per command and outcome, and a duration histogram per command. Commands are only those of the
/// command table (anything else counts as `other`), and outcomes are `ok` or a NodeError code, so
/// a peer sending made-up command names cannot grow the series without bound.
public final class InvokeStats: Sendable {
    /// Upper bounds of the duration buckets, in seconds: from a 5 ms `device.info` to a two-minute
    /// `stt.listen` or `system.run`.
    public static let bucketBounds: [Double] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120]

    public struct Durations: Sendable, Equatable {
        /// Cumulative counts per bound of `bucketBounds` (Prometheus's `le` buckets, +Inf = `count`).
        public var buckets = [Int](repeating: 0, count: InvokeStats.bucketBounds.count)
        public var sum = 0.0
        public var count = 0
    }

    public struct Snapshot: Sendable, Equatable {
        /// command → outcome → count
        public var outcomes: [String: [String: Int]] = [:]
        public var durations: [String: Durations] = [:]
    }

    private let state = Locked(Snapshot())

    public init() {}

    public func record(command: String, outcome: String, seconds: Double) {
        state.withLock { s in
            s.outcomes[command, default: [:]][outcome, default: 0] += 1
            var d = s.durations[command] ?? Durations()
            for (i, bound) in Self.bucketBounds.enumerated() where seconds <= bound { d.buckets[i] += 1 }
            d.sum += seconds
            d.count += 1
            s.durations[command] = d
        }
    }

    public var snapshot: Snapshot { state.withLock { $0 } }
}
