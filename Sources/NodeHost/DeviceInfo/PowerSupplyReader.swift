import Config
import Glibc
import Kit
import Support

/// The wire values of `battery.state`, as on iOS (`UIDevice.BatteryState`).
enum BatteryState: String, Sendable, Encodable {
    case unknown, unplugged, charging, full
}

/// `device.status.battery`: `level` left out when there is no system battery.
struct BatteryStatus: Sendable, Equatable, Encodable {
    /// 0...1; nil when the machine has no system battery.
    var level: Double?
    var state: BatteryState
    var lowPowerModeEnabled: Bool
}

/// Battery state from /sys/class/power_supply (the kernel's power_supply class, which UPower
/// also reads).
///
/// Mapping of a battery's `status`:
///   Charging → charging; Discharging → unplugged; Full → full;
///   "Not charging" → full: the battery sits on AC held at a charge threshold, and iOS's `full`
///   is the only state meaning "on external power, not charging";
///   Unknown/absent → decided by the AC adapters (Mains/USB `online`): on power → full,
///   off power → unplugged, no adapter info → unknown.
/// With several batteries (ThinkPads with two), any charging → charging, else any discharging →
/// unplugged, else all full → full. No system battery at all (desktops, servers, VMs): `level`
/// is omitted and the state is unknown, as iOS reports for devices without a battery.
struct PowerSupplyReader: Sendable {
    let sys: SysRoot
    private let base = "/sys/class/power_supply/"

    func read() -> BatteryStatus {
        var batteries: [Battery] = []
        var acOnline: Bool?
        for name in sys.children(base) {
            let dir = base + name + "/"
            // Wireless mice and headsets publish batteries with scope "Device"; they say nothing
            // about this machine's power.
            if sys.value(dir + "scope")?.lowercased() == "device" { continue }
            switch sys.value(dir + "type") {
            case "Battery":
                if sys.int(dir + "present") == 0 { continue }
                batteries.append(readBattery(dir))
            case "Mains", "USB", "USB_C", "USB_PD", "Wireless":
                if let online = sys.int(dir + "online") { acOnline = (acOnline ?? false) || online != 0 }
            default:
                continue
            }
        }
        let lowPower = lowPowerModeEnabled()
        guard !batteries.isEmpty else { return BatteryStatus(level: nil, state: .unknown, lowPowerModeEnabled: lowPower) }
        return BatteryStatus(level: Self.combinedLevel(batteries),
                             state: Self.combinedState(batteries.map(\.status), acOnline: acOnline),
                             lowPowerModeEnabled: lowPower)
    }

    struct Battery: Sendable {
        var status: String?
        /// capacity in percent.
        var capacity: Double?
        /// now/full in one unit (µWh or µAh), for weighting several batteries by size.
        var now: Double?
        var full: Double?

        var fraction: Double? {
            if let capacity { return capacity / 100 }
            if let now, let full, full > 0 { return now / full }
            return nil
        }
    }

    private func readBattery(_ dir: String) -> Battery {
        var b = Battery(status: sys.value(dir + "status"), capacity: sys.int(dir + "capacity").map(Double.init))
        // Drivers expose either energy_* (µWh) or charge_* (µAh), never a meaningful mix.
        for unit in ["energy", "charge"] {
            if let now = sys.int(dir + unit + "_now"), let full = sys.int(dir + unit + "_full"), full > 0 {
                b.now = Double(now); b.full = Double(full)
                break
            }
        }
        return b
    }

    static func combinedLevel(_ batteries: [Battery]) -> Double? {
        let level: Double
        if batteries.count > 1, batteries.allSatisfy({ $0.now != nil && $0.full != nil }) {
            // Two packs of different sizes: the total stored charge, not the mean of percentages.
            let now = batteries.reduce(0) { $0 + ($1.now ?? 0) }
            let full = batteries.reduce(0) { $0 + ($1.full ?? 0) }
            level = now / full
        } else {
            let fractions = batteries.compactMap(\.fraction)
            guard !fractions.isEmpty else { return nil }
            level = fractions.reduce(0, +) / Double(fractions.count)
        }
        return (min(max(level, 0), 1) * 100).rounded() / 100
    }

    static func combinedState(_ statuses: [String?], acOnline: Bool?) -> BatteryState {
        let states: [BatteryState?] = statuses.map { status in
            switch status?.lowercased() {
            case "charging": return .charging
            case "discharging": return .unplugged
            case "full", "not charging": return .full
            default: return nil
            }
        }
        if states.contains(.charging) { return .charging }
        if states.contains(.unplugged) { return .unplugged }
        if states.allSatisfy({ $0 == .full }) { return .full }
        switch acOnline {
        case true?: return .full
        case false?: return .unplugged
        case nil: return .unknown
        }
    }

    /// The closest Linux analogue of iOS Low Power Mode: the firmware platform profile set to
    /// "low-power", or power-profiles-daemon's persisted "power-saver" choice (it applies that
    /// without a platform profile on many machines). Neither present → false.
    func lowPowerModeEnabled() -> Bool {
        if sys.value("/sys/firmware/acpi/platform_profile") == "low-power" { return true }
        if let text = sys.read("/var/lib/power-profiles-daemon/state.ini") {
            for line in text.split(whereSeparator: \.isNewline) {
                let parts = line.split(separator: "=", maxSplits: 1).map { $0.trimmed() }
                if parts.count == 2, parts[0] == "Profile" { return parts[1] == "power-saver" }
            }
        }
        return false
    }
}
