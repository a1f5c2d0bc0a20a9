import Config
import Kit
import Store
import Support

/// Wide-area (unicast) DNS-SD, RFC 6763 over ordinary DNS: PTR `_openclaw-gw._tcp.<domain>` lists
/// the instances; each instance's SRV gives host and port, its TXT the hints, and A/AAAA of the SRV
/// target the addresses (taken from the additional section when the server sent them). This is how
/// a node finds a gateway across a tailnet, where multicast does not travel.
public struct WideAreaBrowser: Sendable {
    public let domain: DNSName
    public let resolver: any DNSQuerying

    public struct Result: Sendable {
        public var gateways: [DiscoveredGateway] = []
        /// Instances that were listed but could not be resolved, and why.
        public var problems: [String] = []
        /// Set when the listing itself failed (no answer, server error); nil for "none advertised".
        public var error: String?
    }

    public init(domain: DNSName, resolver: any DNSQuerying) {
        self.domain = domain; self.resolver = resolver
    }

    public var serviceName: DNSName {
        domain.prepending(DNSName(labels: [Array("_openclaw-gw".utf8), Array("_tcp".utf8)]))
    }

    public func browse() async -> Result {
        var result = Result()
        let ptr: DNSMessage
        do {
            ptr = try await resolver.query(serviceName, .ptr)
        } catch {
            if error.kind != .nxdomain && error.kind != .noData { result.error = error.description }
            return result
        }
        var instances: [DNSName] = []
        for r in ptr.answers where r.name.sameName(as: serviceName) {
            if case .ptr(let target) = r.data, !instances.contains(where: { $0.sameName(as: target) }) { instances.append(target) }
        }
        // Resolve the instances side by side: each query waits on the network, not on us.
        await withTaskGroup(of: (Int, Swift.Result<DiscoveredGateway, DNSQueryError>).self) { group in
            for (i, inst) in instances.enumerated() {
                group.addTask { (i, await self.resolve(inst, hints: ptr)) }
            }
            var found: [(Int, DiscoveredGateway)] = []
            for await (i, r) in group {
                switch r {
                case .success(let g): found.append((i, g))
                case .failure(let e): result.problems.append("\(instances[i].text): \(e.description)")
                }
            }
            result.gateways = found.sorted { $0.0 < $1.0 }.map(\.1)
        }
        return result
    }

    /// SRV + TXT + addresses of one instance. Records the PTR answer already carried (servers
    /// often add SRV/TXT/A as additionals) are used before asking again.
    func resolve(_ instance: DNSName, hints: DNSMessage) async -> Swift.Result<DiscoveredGateway, DNSQueryError> {
        var known = hints.allRecords
        func records(_ name: DNSName, _ type: DNSMessage.RecordType) -> [DNSMessage.Record] {
            known.filter { $0.type == type.rawValue && $0.name.sameName(as: name) }
        }
        do {
            if records(instance, .srv).isEmpty { known += try await resolver.query(instance, .srv).allRecords }
            // RFC 6763 §6: every service has a TXT record; a missing one only costs the hints.
            if records(instance, .txt).isEmpty, let txt = try? await resolver.query(instance, .txt) { known += txt.allRecords }
        } catch {
            return .failure(error)
        }
        let srvs = records(instance, .srv).compactMap { r -> (UInt16, UInt16, UInt16, DNSName)? in
            if case .srv(let p, let w, let port, let t) = r.data { return (p, w, port, t) }
            return nil
        }.sorted { ($0.0, UInt16.max - $0.1) < ($1.0, UInt16.max - $1.1) }
        guard let srv = srvs.first else { return .failure(DNSQueryError(.noData, "no SRV record")) }
        // RFC 2782: a target of "." means the service is decidedly not available here.
        guard !srv.3.labels.isEmpty else { return .failure(DNSQueryError(.noData, "SRV target \".\": the service is not offered")) }
        let target = srv.3
        var v4 = addresses(records(target, .a)), v6 = addresses(records(target, .aaaa))
        if v4.isEmpty && v6.isEmpty {
            async let a = try? resolver.query(target, .a)
            async let aaaa = try? resolver.query(target, .aaaa)
            let (ra, raaaa) = await (a, aaaa)
            v4 = addresses((ra?.allRecords ?? []).filter { $0.name.sameName(as: target) })
            v6 = addresses((raaaa?.allRecords ?? []).filter { $0.name.sameName(as: target) })
        }
        var strings: [[UInt8]] = []
        for r in records(instance, .txt) { if case .txt(let s) = r.data { strings += s } }
        let name = instance.labels.first.map { String(decoding: $0, as: UTF8.self) } ?? instance.text
        var host = target.text
        if host.count > 1 && host.hasSuffix(".") { host.removeLast() }
        return .success(DiscoveredGateway(instanceName: name, domain: domain.text, source: .wideArea, host: host,
                                          addresses: v4 + v6, port: Int(srv.2), txt: GatewayTXT(strings: strings)))
    }

    private func addresses(_ records: [DNSMessage.Record]) -> [String] {
        records.compactMap { r in
            switch r.data {
            case .a(let s), .aaaa(let s): return s
            default: return nil
            }
        }
    }
}
