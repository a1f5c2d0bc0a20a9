import Glibc

/// A position gpsd reported with a 2D or 3D fix, plus when this node received it.
public struct GpsFix: Sendable, Equatable {
    public enum Mode: Int, Sendable { case twoD = 2, threeD = 3 }

    public var latitude: Double
    public var longitude: Double
    public var mode: Mode
    /// Above mean sea level; only for 3D fixes (a 2D fix has no meaningful altitude).
    public var altitudeMeters: Double?
    public var speedMps: Double?
    /// Course over ground, degrees from true north.
    public var headingDeg: Double?
    /// Horizontal error estimate in meters; nil when gpsd gave none (see `LocationAccuracy`).
    public var accuracyMeters: Double?
    /// The receiver's time of the fix (nil when gpsd did not know the date yet).
    public var time: WallTime?
    public var device: String?
    /// Monotonic receive time: fix age (maxAgeMs) is measured on this, so a wrong GPS or system
    /// clock cannot make a stale fix look fresh.
    public var receivedAt: ContinuousClock.Instant
    public var receivedWallTime: WallTime

    public init(latitude: Double, longitude: Double, mode: Mode, altitudeMeters: Double? = nil, speedMps: Double? = nil,
                headingDeg: Double? = nil, accuracyMeters: Double? = nil, time: WallTime? = nil, device: String? = nil,
                receivedAt: ContinuousClock.Instant = .now, receivedWallTime: WallTime = WallTime.now) {
        self.latitude = latitude; self.longitude = longitude; self.mode = mode
        self.altitudeMeters = altitudeMeters; self.speedMps = speedMps; self.headingDeg = headingDeg
        self.accuracyMeters = accuracyMeters; self.time = time; self.device = device
        self.receivedAt = receivedAt; self.receivedWallTime = receivedWallTime
    }

    /// The fix in a TPV report, or nil when the report has no usable position (mode < 2, no lat/lon).
    /// The accuracy is gpsd's `eph`, else the combined `epx`/`epy`, else the receiver's GST
    /// 1-sigma estimates (`gst`, when it is at most 2 s older or newer than the TPV: gpsd sends
    /// GST after the TPV of its cycle, so the one at hand is usually the previous cycle's).
    init?(tpv: GpsdMessage.TPV, gst: GpsdMessage.GST?, receivedAt: ContinuousClock.Instant, receivedWallTime: WallTime) {
        guard tpv.mode >= 2, let mode = Mode(rawValue: tpv.mode), let lat = tpv.lat, let lon = tpv.lon else { return nil }
        latitude = lat
        longitude = lon
        self.mode = mode
        altitudeMeters = mode == .threeD ? tpv.altMSL : nil
        speedMps = tpv.speed
        headingDeg = tpv.track.map { $0 == 360 ? 0 : $0 }
        if let eph = tpv.eph {
            accuracyMeters = eph
        } else if let x = tpv.epx, let y = tpv.epy {
            accuracyMeters = (x * x + y * y).squareRoot()
        } else if let g = gst, let gt = g.time.flatMap(ISOTime.parse), let tt = tpv.time.flatMap(ISOTime.parse),
                  abs(gt.timeIntervalSince(tt)) <= 2, let sl = g.lat, let so = g.lon {
            accuracyMeters = (sl * sl + so * so).squareRoot()
        } else {
            accuracyMeters = tpv.epx ?? tpv.epy
        }
        time = tpv.time.flatMap(ISOTime.parse)
        device = tpv.device
        self.receivedAt = receivedAt
        self.receivedWallTime = receivedWallTime
    }

    /// Great-circle distance in meters (haversine on a spherical Earth; good to ~0.5 %).
    public func distance(to other: GpsFix) -> Double {
        GpsFix.distance(latitude, longitude, other.latitude, other.longitude)
    }

    public static func distance(_ lat1: Double, _ lon1: Double, _ lat2: Double, _ lon2: Double) -> Double {
        let r = 6_371_008.8
        let p1 = lat1 * .pi / 180, p2 = lat2 * .pi / 180
        let dp = (lat2 - lat1) * .pi / 180, dl = (lon2 - lon1) * .pi / 180
        let a = sin(dp / 2) * sin(dp / 2) + cos(p1) * cos(p2) * sin(dl / 2) * sin(dl / 2)
        return 2 * r * atan2(a.squareRoot(), (1 - a).squareRoot())
    }
}
