/// Duration in the units system calls and logs want (poll() milliseconds, timeIntervals).
extension Duration {
    /// Whole milliseconds, rounded down.
    public var milliseconds: Int64 { components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000 }
    /// Seconds with the fraction.
    public var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
