import Config
import Kit
import Support

/// One report of gpsd's JSON protocol (https://gpsd.io/gpsd_json.html), reduced to the fields the
/// node uses. Parsing is total: anything that is not a JSON object with a known `class` becomes
/// `nil` (malformed) or `.other`, never a crash. Numbers that are absent, null, non-finite or out
/// of range are treated as absent, so no garbage reaches a payload.
enum GpsdMessage: Sendable, Equatable {
    case version(release: String, protoMajor: Int?, protoMinor: Int?)
    /// The full device list (answer to ?WATCH / ?DEVICES).
    case devices([String])
    /// One device appeared (`activated` set) or went away (`activated` 0 / absent).
    case device(path: String, active: Bool)
    case tpv(TPV)
    case sky(Sky)
    case gst(GST)
    /// gpsd's answer to ?WATCH (it comes after DEVICES): the watch is set up.
    case watch
    case error(String)
    case other(String)

    /// Time-position-velocity. `mode`: 0 unknown, 1 no fix, 2 = 2D, 3 = 3D.
    struct TPV: Sendable, Equatable {
        var device: String?
        var mode: Int
        var time: String?
        var lat: Double?
        var lon: Double?
        /// Altitude above mean sea level (gpsd ≥ 3.20 `altMSL`, older `alt`).
        var altMSL: Double?
        var speed: Double?
        var track: Double?
        /// Estimated horizontal position error (m), and its longitude/latitude components.
        var eph: Double?
        var epx: Double?
        var epy: Double?
    }

    struct Sky: Sendable, Equatable {
        var device: String?
        var hdop: Double?
        /// Satellites seen / used in the solution (counted from `satellites` when gpsd omits them).
        var seen: Int?
        var used: Int?
    }

    /// Pseudorange noise report: the receiver's own 1-sigma error estimates in meters.
    struct GST: Sendable, Equatable {
        var device: String?
        var time: String?
        var lat: Double?
        var lon: Double?
    }

    static func parse(_ line: String) -> GpsdMessage? {
        guard let v = JSONValue.parse(line), let obj = v.objectValue, let cls = obj["class"]?.stringValue else { return nil }
        switch cls {
        case "VERSION":
            return .version(release: obj["release"]?.stringValue ?? "?", protoMajor: obj["proto_major"]?.intValue,
                            protoMinor: obj["proto_minor"]?.intValue)
        case "DEVICES":
            // A list that is not a list is malformed, not "no devices".
            guard let list = obj["devices"]?.arrayValue else { return nil }
            return .devices(list.compactMap { $0["path"]?.stringValue })
        case "DEVICE":
            guard let path = obj["path"]?.stringValue else { return .other(cls) }
            // gpsd sends "activated": <ISO time> when a device comes up and 0 when it is closed.
            let active: Bool
            switch obj["activated"] {
            case .string(let s): active = !s.isEmpty
            case .number(let n): active = n != 0
            default: active = false
            }
            return .device(path: path, active: active)
        case "TPV":
            let mode = obj["mode"]?.intValue ?? 0
            return .tpv(TPV(device: obj["device"]?.stringValue, mode: (0...3).contains(mode) ? mode : 0,
                            time: obj["time"]?.stringValue,
                            lat: number(obj["lat"], in: -90...90), lon: number(obj["lon"], in: -180...180),
                            altMSL: number(obj["altMSL"]) ?? number(obj["alt"]),
                            speed: number(obj["speed"], in: 0...Double.greatestFiniteMagnitude),
                            track: number(obj["track"], in: 0...360),
                            eph: positive(obj["eph"]), epx: positive(obj["epx"]), epy: positive(obj["epy"])))
        case "SKY":
            let sats = obj["satellites"]?.arrayValue
            let seen = obj["nSat"]?.intValue ?? sats?.count
            let used = obj["uSat"]?.intValue ?? sats?.filter { $0["used"]?.boolValue == true }.count
            return .sky(Sky(device: obj["device"]?.stringValue, hdop: positive(obj["hdop"]), seen: seen, used: used))
        case "GST":
            return .gst(GST(device: obj["device"]?.stringValue, time: obj["time"]?.stringValue,
                            lat: positive(obj["lat"]), lon: positive(obj["lon"])))
        case "WATCH":
            return .watch
        case "ERROR":
            return .error(obj["message"]?.stringValue ?? "unspecified")
        default:
            return .other(cls)
        }
    }

    private static func number(_ v: JSONValue?, in range: ClosedRange<Double>? = nil) -> Double? {
        guard let d = v?.doubleValue, d.isFinite else { return nil }
        if let range, !range.contains(d) { return nil }
        return d
    }

    /// Error estimates: a zero or negative value is "unknown", not "perfect", and so is one past
    /// 10,000 km (gpsd's own are metres to kilometres; 1e300 from a hostile or broken source used
    /// to reach an Int conversion).
    private static func positive(_ v: JSONValue?) -> Double? {
        guard let d = number(v, in: 0...1e7), d > 0 else { return nil }
        return d
    }
}
