import Config
import Glibc
import Store
import Support

/// What avahi has told us so far, one row per (interface, protocol, instance): the same gateway
/// shows up once per interface and per IPv4/IPv6, and each row comes and goes on its own. The
/// table merges rows of one instance into one `DiscoveredGateway` and knows when every row that
/// was announced has been resolved (or failed), so `discover` can stop early. Thread-safe: avahi's
/// callbacks write from the poll thread, readers are anywhere.
public final class LANServiceTable: Sendable {
    public struct Key: Hashable, Sendable {
        public let interface: Int32
        public let proto: Int32
        public let name: String
        public let domain: String
    }

    public struct Resolved: Sendable, Equatable {
        public var host: String
        public var address: String
        public var port: Int
        public var txt: [[UInt8]]
        public var interfaceName: String
        public var ipv6: Bool
    }

    enum Row: Sendable { case pending, resolved(Resolved), failed(String) }

    private struct Table {
        var rows: [Key: Row] = [:]
        var order: [Key] = []
        var allForNow = false
    }
    private let table = Locked(Table())

    public init() {}

    func announced(_ k: Key) {
        table.withLock { t in
            if t.rows[k] == nil { t.order.append(k) }
            t.rows[k] = .pending
        }
    }

    /// Also called again when a resolved service changes (avahi keeps resolvers open).
    func resolved(_ k: Key, _ r: Resolved) {
        table.withLock { t in
            if t.rows[k] == nil { t.order.append(k) }
            t.rows[k] = .resolved(r)
        }
    }

    func failed(_ k: Key, _ why: String) { table.withLock { t in if t.rows[k] != nil { t.rows[k] = .failed(why) } } }

    func removed(_ k: Key) {
        table.withLock { t in
            t.rows[k] = nil
            t.order.removeAll { $0 == k }
        }
    }

    func setAllForNow() { table.withLock { $0.allForNow = true } }

    func reset() {
        table.withLock { $0 = Table() }
    }

    /// avahi reported everything it knew at browse start and nothing announced is still resolving.
    public var settled: Bool {
        table.withLock { t in t.allForNow && !t.rows.values.contains { if case .pending = $0 { return true }; return false } }
    }

    /// Instances that were announced but could not be resolved, and why.
    public var failures: [String] {
        table.withLock { t in
            t.order.compactMap { k in if case .failed(let why)? = t.rows[k] { return "\(k.name): \(why)" }; return nil }
        }
    }

    /// One gateway per instance name (mDNS names are case-insensitive), addresses of every row
    /// merged, IPv4 rows first for host/port/TXT.
    public var gateways: [DiscoveredGateway] {
        let snapshot: [(Key, Resolved)] = table.withLock { t in
            t.order.compactMap { k in if case .resolved(let r)? = t.rows[k] { return (k, r) }; return nil }
        }
        var groups: [String: [(Key, Resolved)]] = [:]
        var names: [String] = []
        for (k, r) in snapshot {
            let id = k.name.lowercased() + "\u{0}" + k.domain.lowercased()
            if groups[id] == nil { names.append(id) }
            groups[id, default: []].append((k, r))
        }
        return names.map { id in
            let rows = groups[id]!.sorted { !$0.1.ipv6 && $1.1.ipv6 }
            let (k, first) = rows[0]
            var ifaces: [String] = []
            for (_, r) in rows where !ifaces.contains(r.interfaceName) { ifaces.append(r.interfaceName) }
            let domain = k.domain.hasSuffix(".") ? k.domain : k.domain + "."
            return DiscoveredGateway(instanceName: k.name, domain: domain, source: .lan, host: first.host,
                                     addresses: rows.map(\.1.address), port: first.port,
                                     txt: GatewayTXT(strings: first.txt), interfaces: ifaces)
        }
    }
}
