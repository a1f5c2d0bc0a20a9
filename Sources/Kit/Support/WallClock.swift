import Glibc

/// The wall clock (CLOCK_REALTIME), for timestamps that leave the process: log lines, reported
/// times, stored records. Intervals use ContinuousClock, which NTP cannot move.
public enum WallClock {
    /// Milliseconds since 1970-01-01 UTC.
    public static var milliseconds: Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1000 + Int64(ts.tv_nsec) / 1_000_000
    }

    /// Seconds since 1970-01-01 UTC, with the fraction.
    public static var seconds: Double {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
}
