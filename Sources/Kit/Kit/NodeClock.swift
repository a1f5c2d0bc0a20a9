import Support

/// The time a bundle reads, as a protocol so a test can hand it a clock of its own: monotonic time
/// for intervals (it never jumps when NTP sets the wall clock at boot) and wall time for the
/// timestamps a bundle reports. Handed to bundles in `CapabilityContext.clock`.
public protocol NodeClock: Sendable {
    var now: ContinuousClock.Instant { get }
    /// Milliseconds since 1970-01-01 UTC.
    var wallMilliseconds: Int64 { get }
}

/// The system's clocks.
public struct SystemClock: NodeClock {
    public init() {}
    public var now: ContinuousClock.Instant { .now }
    public var wallMilliseconds: Int64 { WallClock.milliseconds }
}
