import Config
import Glibc
import Kit
import Support

/// The `location.get` result shape shared with the iOS/Android nodes:
/// `{lat, lon, accuracyMeters, altitudeMeters?, speedMps?, headingDeg?, timestamp, isPrecise, source}`.
/// Optional fields are left out when unknown; nothing is ever `null` or NaN.
enum LocationPayload {
    /// As a payload tree (the `location.update` event's payload).
    static func make(_ fix: GpsFix, accuracy mode: LocationAccuracy) -> JSONValue {
        (try? JSONValueEncoder.encode(result(fix, accuracy: mode))) ?? [:]
    }

    static func result(_ fix: GpsFix, accuracy mode: LocationAccuracy) -> LocationGetResult {
        var lat = fix.latitude, lon = fix.longitude
        var error = fix.accuracyMeters ?? LocationAccuracy.unknownAccuracyMeters
        if let step = mode.gridDegrees {
            let cells = 1 / step
            lat = (lat * cells).rounded() / cells
            lon = (lon * cells).rounded() / cells
            // The rounded point can be off by half a cell diagonal; say so in the error estimate.
            error += roundingErrorMeters(step: step, latitude: fix.latitude)
        }
        func finite(_ v: Double?, decimals: Int) -> Double? { v.flatMap { $0.isFinite ? round($0, decimals: decimals) : nil } }
        return LocationGetResult(
            lat: lat, lon: lon, accuracyMeters: round(error, decimals: 1),
            altitudeMeters: finite(fix.altitudeMeters, decimals: 2), speedMps: finite(fix.speedMps, decimals: 3),
            headingDeg: finite(fix.headingDeg, decimals: 2),
            timestamp: ISOTime.format(fix.time ?? fix.receivedWallTime),
            isPrecise: mode.gridDegrees == nil && error <= LocationAccuracy.preciseLimitMeters)
    }

    /// Half the diagonal of a `step`° cell at `latitude`, in meters.
    static func roundingErrorMeters(step: Double, latitude: Double) -> Double {
        let metersPerDegree = 111_320.0
        let dy = step / 2 * metersPerDegree
        let dx = step / 2 * metersPerDegree * cos(latitude * .pi / 180)
        return (dx * dx + dy * dy).squareRoot()
    }

    /// Rounds derived quantities so payloads do not carry float noise (coordinates stay exact).
    /// (Dividing by a power of ten gives the shortest decimal text; multiplying by 0.1 would not.)
    static func round(_ v: Double, decimals: Int) -> Double {
        let f = pow(10.0, Double(decimals))
        return (v * f).rounded() / f
    }
}
