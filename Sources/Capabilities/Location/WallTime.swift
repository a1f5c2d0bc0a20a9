import Support

/// A moment on the wall clock (seconds since 1970-01-01 UTC, with the fraction): the receiver's
/// time of a fix and when this node received it, as the payload reports them. The part of
/// Foundation's Date this bundle needs.
public struct WallTime: Sendable, Equatable, Comparable {
    public let timeIntervalSince1970: Double

    public init(timeIntervalSince1970 seconds: Double) { timeIntervalSince1970 = seconds }

    public static var now: WallTime { WallTime(timeIntervalSince1970: WallClock.seconds) }

    public func timeIntervalSince(_ other: WallTime) -> Double { timeIntervalSince1970 - other.timeIntervalSince1970 }

    public static func < (a: WallTime, b: WallTime) -> Bool { a.timeIntervalSince1970 < b.timeIntervalSince1970 }
}
