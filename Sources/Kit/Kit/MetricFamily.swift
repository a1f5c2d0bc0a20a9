/// One metric a capability reports for the node's Prometheus endpoint (`ReportsMetrics`): the
/// name without the `openclaw_node_` prefix the endpoint adds, its help line, its type and its
/// samples. Names and labels follow Prometheus's conventions: snake_case, a unit suffix
/// (`_seconds`, `_bytes`), `_total` on counters.
public struct MetricFamily: Sendable {
    public enum Kind: String, Sendable { case gauge, counter, histogram }

    public struct Sample: Sendable {
        /// Appended to the family's name (a histogram's `_bucket`, `_sum`, `_count`); usually empty.
        public let suffix: String
        public let labels: [(String, String)]
        public let value: Double
        public init(suffix: String = "", _ labels: [(String, String)] = [], _ value: Double) {
            self.suffix = suffix; self.labels = labels; self.value = value
        }
    }

    public var name: String
    public let help: String
    public let kind: Kind
    public let samples: [Sample]

    public init(_ name: String, _ kind: Kind, _ help: String, _ samples: [Sample]) {
        self.name = name; self.kind = kind; self.help = help; self.samples = samples
    }

    /// A family of one unlabelled sample.
    public init(_ name: String, _ kind: Kind, _ help: String, value: Double) {
        self.init(name, kind, help, [Sample([], value)])
    }
}

/// A capability with numbers worth watching from a fleet dashboard (MCP servers connected, talk
/// conversations running). Asked at each scrape; must answer fast and start nothing.
public protocol ReportsMetrics: Capability {
    func metrics() async -> [MetricFamily]
}
