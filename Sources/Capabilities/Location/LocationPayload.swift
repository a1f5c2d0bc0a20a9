import Config
import Glibc
import Kit
import Support

/// The `location.get` result shape shared with the iOS/Android nodes:
/// `{lat, lon, accuracyMeters, altitudeMeters?, speedMps?, headingDeg?, timestamp, isPrecise, source}`.
/// Optional fields are left out when unknown; nothing is ever `null` or NaN.
enum LocationPayload {
    static func make(_ fix: GpsFix, accuracy mode: LocationAccuracy) -> JSONValue {
        var lat = fix.latitude, lon = fix.longitude
        var error = fix.accuracyMeters ?? LocationAccuracy.unknownAccuracyMeters
        if let step = mode.gridDegrees {
            let cells = 1 / step
            lat = (lat * cells).rounded() / cells
            lon = (lon * cells).rounded() / cells
            // The rounded point can be off by half a cell diagonal; say so in the error estimate.
            error += roundingErrorMeters(step: step, latitude: fix.latitude)
        }
        var out: [String: JSONValue] = [
            "lat": .number(lat),
            "lon": .number(lon),
            "accuracyMeters": .number(round(error, decimals: 1)),
            "timestamp": .string(ISOTime.format(fix.time ?? fix.receivedWallTime)),
            "isPrecise": .bool(mode.gridDegrees == nil && error <= LocationAccuracy.preciseLimitMeters),
            "source": "gps",
        ]
        if let v = fix.altitudeMeters, v.isFinite { out["altitudeMeters"] = .number(round(v, decimals: 2)) }
        if let v = fix.speedMps, v.isFinite { out["speedMps"] = .number(round(v, decimals: 3)) }
        if let v = fix.headingDeg, v.isFinite { out["headingDeg"] = .number(round(v, decimals: 2)) }
        return .object(out)
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
