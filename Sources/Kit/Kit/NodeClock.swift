import Support

/// The time a bundle reads, as a protocol so a test can hand it a clock of its own: monotonic time
/// for intervals (it never jumps when NTP sets the wall clock at boot) and wall time for the
/// timestamps a bundle reports. Handed to bundles in `CapabilityContext.clock`.
public protocol NodeClock: Sendable {
    var now: ContinuousClock.Instant { get }
    /// Milliseconds since 1970-01-01 UTC.
    var wallMilliseconds: Int64 { get }
    /// Waits `duration` of this clock's time (periodic work: host stats); throws when cancelled.
    func sleep(for duration: Duration) async throws
}

extension NodeClock {
    public func sleep(for duration: Duration) async throws { try await Task.sleep(for: duration) }
}

/// The system's clocks.
public struct SystemClock: NodeClock {
    public init() {}
    public var now: ContinuousClock.Instant { .now }
    public var wallMilliseconds: Int64 { WallClock.milliseconds }
}
