import Config
import Kit
import Support

/// Which interfaces carry a default route, from the kernel's main routing table as exposed in
/// /proc/net/route (IPv4) and /proc/net/ipv6_route (IPv6). Routes in policy-routing tables
/// (e.g. wg-quick's) are not listed there; the main table is what an ordinary socket uses.
struct RouteTableReader: Sendable {
    let sys: SysRoot

    /// RTF_UP: the route is usable. RTF_REJECT: an "unreachable" route, which the kernel
    /// installs as a catch-all ::/0 on `lo`; it must not count as connectivity.
    private static let rtfUp: UInt32 = 0x0001
    private static let rtfReject: UInt32 = 0x0200

    func defaultRouteInterfaces() -> Set<String> {
        var names = Set<String>()
        if let text = sys.read("/proc/net/route") { names.formUnion(Self.ipv4Defaults(text)) }
        if let text = sys.read("/proc/net/ipv6_route") { names.formUnion(Self.ipv6Defaults(text)) }
        names.remove("lo")
        return names
    }

    /// Columns: Iface Destination Gateway Flags RefCnt Use Metric Mask …, hex in host byte order.
    static func ipv4Defaults(_ text: String) -> Set<String> {
        var names = Set<String>()
        for line in text.split(separator: "\n").dropFirst() {
            let f = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard f.count >= 8,
                  let dest = UInt32(f[1], radix: 16), let flags = UInt32(f[3], radix: 16),
                  let mask = UInt32(f[7], radix: 16) else { continue }
            if dest == 0, mask == 0, usable(flags) { names.insert(String(f[0])) }
        }
        return names
    }

    /// Columns: dest destPrefixLen src srcPrefixLen nextHop metric refCnt use flags iface.
    static func ipv6Defaults(_ text: String) -> Set<String> {
        var names = Set<String>()
        for line in text.split(separator: "\n") {
            let f = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard f.count >= 10, let prefixLen = UInt32(f[1], radix: 16),
                  let flags = UInt32(f[8], radix: 16) else { continue }
            if prefixLen == 0, f[0].allSatisfy({ $0 == "0" }), usable(flags) { names.insert(String(f[9])) }
        }
        return names
    }

    private static func usable(_ flags: UInt32) -> Bool { flags & rtfUp != 0 && flags & rtfReject == 0 }
}
