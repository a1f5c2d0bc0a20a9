import Config
import Kit
import Support

/// The wire values of `thermal.state`, as on iOS (`ProcessInfo.ThermalState`), ordered so the
/// hottest zone can be picked with `max`.
enum ThermalState: Int, Sendable, Comparable {
    case nominal, fair, serious, critical

    var name: String {
        switch self {
        case .nominal: "nominal"
        case .fair: "fair"
        case .serious: "serious"
        case .critical: "critical"
        }
    }

    static func < (a: ThermalState, b: ThermalState) -> Bool { a.rawValue < b.rawValue }
}

/// Thermal pressure from /sys/class/thermal: every zone is mapped on its own and the hottest
/// result wins, since one overheating package throttles the machine whatever the others read.
///
/// A zone's trip points are the firmware's own statement of what is too hot, so they take
/// precedence over fixed numbers:
///   - at or above a `hot` or `critical` trip → critical (the kernel hibernates or shuts down there);
///   - at or above the lowest `passive` trip → serious (the kernel throttles there, which is what
///     iOS's "serious" means: performance is impacted);
///   - without a passive trip, throttling is assumed 10 °C below hot/critical;
///   - within 15 °C below that throttling point → fair;
///   - otherwise nominal.
/// `active` trips (fan speed steps) are ignored: fans spinning up is not thermal pressure.
/// Zones with no usable hot/critical/passive trip use fixed thresholds:
///   < 70 °C nominal, < 80 °C fair, < 90 °C serious, else critical.
/// No readable zones (VMs, containers) → nominal.
struct ThermalReader: Sendable {
    let sys: SysRoot
    private let base = "/sys/class/thermal/"

    enum TripType: String, Sendable { case active, passive, hot, critical }

    struct Trip: Sendable, Equatable {
        var type: TripType
        var milliCelsius: Int
    }

    func read() -> ThermalState {
        var worst = ThermalState.nominal
        for zone in sys.children(base) where zone.hasPrefix("thermal_zone") {
            let dir = base + zone + "/"
            // Sensors of powered-down devices fail the read or report nonsense; skip them.
            guard let temp = sys.int(dir + "temp"), Self.plausible(temp) else { continue }
            worst = max(worst, Self.state(milliCelsius: temp, trips: trips(dir)))
        }
        return worst
    }

    private func trips(_ dir: String) -> [Trip] {
        sys.children(dir).compactMap { file -> Trip? in
            guard file.hasPrefix("trip_point_"), file.hasSuffix("_type") else { return nil }
            let stem = String(file.dropLast("_type".count))
            guard let type = sys.value(dir + file).flatMap({ TripType(rawValue: $0) }),
                  let temp = sys.int(dir + stem + "_temp"),
                  // Disabled trips read 0 or a sentinel far beyond any real silicon limit.
                  temp > 0, temp < 200_000 else { return nil }
            return Trip(type: type, milliCelsius: temp)
        }
    }

    private static func plausible(_ milliCelsius: Int) -> Bool { milliCelsius > -100_000 && milliCelsius < 250_000 }

    static func state(milliCelsius t: Int, trips: [Trip]) -> ThermalState {
        let passive = trips.filter { $0.type == .passive }.map(\.milliCelsius).min()
        let danger = trips.filter { $0.type == .hot || $0.type == .critical }.map(\.milliCelsius).min()
        guard passive != nil || danger != nil else { return fixedThresholds(milliCelsius: t) }
        if let danger, t >= danger { return .critical }
        let throttle = passive ?? ((danger ?? 0) - 10_000)
        if t >= throttle { return .serious }
        if t >= throttle - 15_000 { return .fair }
        return .nominal
    }

    static func fixedThresholds(milliCelsius t: Int) -> ThermalState {
        switch t {
        case ..<70_000: .nominal
        case ..<80_000: .fair
        case ..<90_000: .serious
        default: .critical
        }
    }
}
