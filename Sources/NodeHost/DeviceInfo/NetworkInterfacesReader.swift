import Config
import Kit
import Support

/// The wire values of `network.interfaces[]`, as on iOS (`NWInterface.InterfaceType`).
enum InterfaceKind: String, Sendable, CaseIterable, Encodable {
    case wifi, cellular, wired, other
}

/// The wire values of `network.status`, as on iOS (`NWPath.Status`).
enum NetworkPathStatus: String, Sendable, Encodable {
    case satisfied, unsatisfied, requiresConnection
}

/// `device.status.network`.
struct NetworkStatus: Sendable, Equatable, Encodable {
    var status: NetworkPathStatus
    var isExpensive: Bool
    var isConstrained: Bool
    var interfaces: [InterfaceKind]
}

/// The network path from /sys/class/net plus the routing table — what iOS gets from NWPath.
///
/// - status: satisfied when an interface that is up carries a default route (IPv4 or IPv6);
///   otherwise unsatisfied. `requiresConnection` (iOS's "VPN on demand would connect") has no
///   Linux counterpart and is never reported.
/// - interfaces: the kinds of the up interfaces that carry a default route, i.e. the ones traffic
///   leaves through; with no default route, the kinds of all up interfaces (a LAN-only box still
///   reports its Ethernet). Deduplicated, in the order wifi, cellular, wired, other; empty when
///   nothing but loopback is up.
/// - isExpensive: every interface in that list is cellular (metered mobile data).
/// - isConstrained: false; Linux has no "Low Data Mode" to read.
struct NetworkInterfacesReader: Sendable {
    let sys: SysRoot
    private let base = "/sys/class/net/"

    struct Interface: Sendable, Equatable {
        var name: String
        var kind: InterfaceKind
        var isUp: Bool
    }

    func read() -> NetworkStatus {
        let up = interfaces().filter(\.isUp)
        let routed = RouteTableReader(sys: sys).defaultRouteInterfaces()
        let carrying = up.filter { routed.contains($0.name) }
        let inUse = carrying.isEmpty ? up : carrying
        let kinds = InterfaceKind.allCases.filter { kind in inUse.contains { $0.kind == kind } }
        return NetworkStatus(status: carrying.isEmpty ? .unsatisfied : .satisfied,
                             isExpensive: !kinds.isEmpty && kinds.allSatisfy { $0 == .cellular },
                             isConstrained: false,
                             interfaces: kinds)
    }

    /// Every interface except loopback.
    func interfaces() -> [Interface] {
        sys.children(base).compactMap { name in
            let dir = base + name + "/"
            // ARPHRD_LOOPBACK = 772.
            guard name != "lo", sys.int(dir + "type") != 772 else { return nil }
            return Interface(name: name, kind: kind(of: name), isUp: isUp(dir))
        }
    }

    /// operstate "up", or a carrier where the driver reports operstate "unknown" (tun, wireguard
    /// and some USB NICs never set operstate). Reading `carrier` fails on a downed link.
    private func isUp(_ dir: String) -> Bool {
        sys.value(dir + "operstate") == "up" || sys.int(dir + "carrier") == 1
    }

    /// Classification, first match wins:
    ///   - `wireless`/`phy80211` entry or DEVTYPE=wlan → wifi;
    ///   - DEVTYPE=wwan, type 519 (ARPHRD_RAWIP, used by QMI/MBIM modems) or a wwan/rmnet name → cellular;
    ///   - a `device` link (backed by real hardware: PCI, USB, virtio) → wired;
    ///   - a stacked device (bridge, VLAN, bond, macvlan) → the best kind among its lower
    ///     devices, so br0 over eth0 counts as wired while docker0 over veths stays other;
    ///   - anything else (veth, tun, wireguard, dummy) → other.
    func kind(of name: String, depth: Int = 0) -> InterfaceKind {
        let dir = base + name + "/"
        let devtype = uevent(dir)["DEVTYPE"]
        if devtype == "wlan" || sys.exists(dir + "wireless") || sys.exists(dir + "phy80211") { return .wifi }
        if devtype == "wwan" || sys.int(dir + "type") == 519 || name.hasPrefix("ww") || name.hasPrefix("rmnet") {
            return .cellular
        }
        if sys.exists(dir + "device") { return .wired }
        // Depth guard: sysfs links cannot loop, but a hand-made fixture could.
        if depth < 4 {
            let lowers = sys.children(base + name).filter { $0.hasPrefix("lower_") }.map { String($0.dropFirst("lower_".count)) }
            let kinds = Set(lowers.map { kind(of: $0, depth: depth + 1) })
            for preferred in [InterfaceKind.wired, .wifi, .cellular] where kinds.contains(preferred) { return preferred }
        }
        return .other
    }

    private func uevent(_ dir: String) -> [String: String] {
        guard let text = sys.read(dir + "uevent") else { return [:] }
        var out: [String: String] = [:]
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: "=", maxSplits: 1)
            if parts.count == 2 { out[String(parts[0])] = String(parts[1]) }
        }
        return out
    }
}
