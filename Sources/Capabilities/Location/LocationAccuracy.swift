import Glibc

/// `desiredAccuracy`: what a fix must show before location.get returns it, and how much of it the
/// caller gets. gpsd has no power/accuracy trade-off to request, so the modes are filters on the
/// receiver's own error estimate (iOS's kCLLocationAccuracyBest / HundredMeters / Kilometer).
public enum LocationAccuracy: String, CaseIterable, Sendable, Decodable {
    /// The best the receiver gives within the timeout: the first 3D fix (or 2D fix within 100 m),
    /// else, at the deadline, the best fix seen. (A receiver stuck in 2D with a good estimate
    /// answers at once; a fresh 2D fix with a poor one gets the timeout's chance to improve.)
    case precise
    /// A fix whose error estimate is at most 100 m.
    case balanced
    /// A fix within 1 km; coordinates are rounded to a 0.01° grid so no more is disclosed.
    case coarse

    /// Reported when gpsd gave no error estimate at all (no eph/epx/epy/GST, e.g. an RMC-only
    /// receiver): we cannot show the fix is better than this, so we do not claim it is.
    public static let unknownAccuracyMeters = 1000.0
    /// `isPrecise` (as in the Linux plugin): an error of at most this, with unrounded coordinates.
    public static let preciseLimitMeters = 100.0

    /// The largest acceptable error estimate (nil = any).
    public var limitMeters: Double? {
        switch self {
        case .precise: return nil
        case .balanced: return 100
        case .coarse: return 1000
        }
    }

    /// True when `fix` is good enough to return at once.
    public func accepts(_ fix: GpsFix) -> Bool {
        let error = fix.accuracyMeters ?? Self.unknownAccuracyMeters
        switch self {
        case .precise: return fix.mode == .threeD || error <= Self.preciseLimitMeters
        case .balanced, .coarse: return error <= limitMeters!
        }
    }

    /// True when `fix` may be returned at the deadline if nothing `accepts` came (precise only:
    /// "best available"; the other modes promise a bound and time out instead).
    public func acceptsAsFallback(_ fix: GpsFix) -> Bool { self == .precise }

    /// Which of two fallback candidates is better: 3D over 2D, then the smaller error.
    public static func better(_ a: GpsFix, than b: GpsFix) -> Bool {
        if a.mode != b.mode { return a.mode == .threeD }
        return (a.accuracyMeters ?? unknownAccuracyMeters) < (b.accuracyMeters ?? unknownAccuracyMeters)
    }

    /// Grid step for coordinates, degrees (nil = unrounded).
    public var gridDegrees: Double? { self == .coarse ? 0.01 : nil }
}
