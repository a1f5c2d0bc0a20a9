@testable import Config
@testable import Discovery
import Foundation
@testable import GatewaySession
@testable import HostPresence
@testable import Kit
@testable import NodeCLI
@testable import Registry
@testable import Store
@testable import Support
@testable import TestSupport
import Testing

/// TXT parsing, DNS-SD name escapes, the DNS wire parser, selection and trust rules.
struct DiscoveryUnitTests {
    func txt(_ entries: [String]) -> GatewayTXT { GatewayTXT(strings: entries.map { Array($0.utf8) }) }

    @Test func txtKeysAreCaseInsensitiveFirstWinsAndBadEntriesAreSkipped() {
        var raw = ["role=gateway", "displayName=Home GW", "DISPLAYNAME=Other", "", "=nokey", "gatewayTls=1", "flag",
                   "gatewayPort=99999", "gatewayTlsSha256=sha256:AB:CD"].map { Array($0.utf8) }
        raw.append([0x6B, 0x01, 0x3D, 0x76]) // key with a control byte
        raw.append(Array("bin=".utf8) + [0xFF, 0xFE]) // value not UTF-8
        let t = GatewayTXT(strings: raw)
        #expect(t.displayName == "Home GW")
        #expect(t["displayname"] == "Home GW")
        #expect(t["flag"] == "")
        #expect(t.tls)
        #expect(t.gatewayPort == nil)
        #expect(t.tlsFingerprint == nil)
        #expect(t["bin"] == nil)
        #expect(t.entries.map(\.key) == ["role", "displayName", "gatewayTls", "flag", "gatewayPort", "gatewayTlsSha256"])
        #expect(t.problems.count == 6, "\(t.problems)")
        #expect(t.problems.contains { $0.contains("no key") })
        #expect(t.problems.contains { $0.contains("repeated TXT key DISPLAYNAME") })
        #expect(t.problems.contains { $0.contains("gatewayPort=99999") })
        #expect(t.problems.contains { $0.contains("bin: its value is not UTF-8") })
        #expect(t.problems.contains { $0.contains("not printable") })
    }

    @Test func txtFingerprintIsNormalised() {
        let fp = String(repeating: "ab", count: 32)
        #expect(txt(["gatewayTlsSha256=SHA256:" + fp.uppercased()]).tlsFingerprint == fp)
        #expect(txt(["gatewayTls=0"]).tls == false)
        #expect(txt([]).tls == false)
    }

    @Test func dnssdEscapesDecode() {
        #expect(DNSSDEscape.unescape("OpenClaw\\032Test\\032GW") == "OpenClaw Test GW")
        #expect(DNSSDEscape.unescape("a\\.b\\\\c") == "a.b\\c")
        #expect(DNSSDEscape.unescape("caf\\195\\169") == "café")
        // Invalid escapes stay as they are.
        #expect(DNSSDEscape.unescape("x\\999y") == "x\\999y")
        #expect(DNSSDEscape.unescape("x\\12") == "x\\12")
        #expect(DNSSDEscape.unescape("trailing\\") == "trailing\\")
        #expect(DNSSDEscape.escapeLabel(Array("Home GW.2\\".utf8)) == "Home\\032GW\\.2\\\\")
    }

    @Test func dnsNameTextRoundTrips() throws {
        let n = try DNSName(text: "Home\\032GW\\.2._openclaw-gw._tcp.openclaw.internal.")
        #expect(n.labels.count == 5)
        #expect(n.labels[0] == Array("Home GW.2".utf8))
        #expect(try DNSName(text: n.text) == n)
        #expect(try DNSName(text: "openclaw.internal") == DNSName(text: "openclaw.internal."))
        #expect(throws: DNSNameError.self) { try DNSName(text: "a..b") }
        #expect(throws: DNSNameError.self) { try DNSName(text: String(repeating: "x", count: 64) + ".com") }
        #expect(try DNSName(text: "A.Example.").sameName(as: DNSName(text: "a.example.")))
    }

    /// A response to PTR _openclaw-gw._tcp.example. with one PTR answer and SRV/TXT/A/AAAA
    /// additionals, every name after the question compressed.
    static func sampleResponse() -> [UInt8] {
        var b: [UInt8] = [0x12, 0x34, 0x81, 0x80, 0, 1, 0, 1, 0, 0, 0, 4]
        func u16(_ v: Int) { b += [UInt8(v >> 8), UInt8(v & 0xFF)] }
        func label(_ s: String) { b.append(UInt8(s.utf8.count)); b += Array(s.utf8) }
        let qname = b.count // 12
        label("_openclaw-gw"); label("_tcp"); label("example"); b.append(0)
        u16(12); u16(1)
        // PTR answer: name = pointer to question; rdata = "Home GW" + pointer.
        b += [0xC0, UInt8(qname)]; u16(12); u16(1); b += [0, 0, 0, 120]
        u16(1 + 7 + 2); let inst = b.count; label("Home GW"); b += [0xC0, UInt8(qname)]
        // SRV: name = pointer to instance; target gw.example (example compressed).
        b += [0xC0, UInt8(inst)]; u16(33); u16(1); b += [0, 0, 0, 120]
        u16(6 + 1 + 2 + 2); u16(0); u16(5); u16(18789); let target = b.count; label("gw"); b += [0xC0, UInt8(qname + 18)]
        // TXT
        b += [0xC0, UInt8(inst)]; u16(16); u16(1); b += [0, 0, 0, 120]
        let t1 = "displayName=Home", t2 = "gatewayTls=1"
        u16(2 + t1.utf8.count + t2.utf8.count); label(t1); label(t2)
        // A and AAAA of the target
        b += [0xC0, UInt8(target)]; u16(1); u16(1); b += [0, 0, 0, 120]; u16(4); b += [192, 168, 1, 20]
        b += [0xC0, UInt8(target)]; u16(28); u16(1); b += [0, 0, 0, 120]; u16(16); b += [0xFD, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]
        return b
    }

    @Test func dnsMessageParsesCompressedNames() throws {
        let m = try DNSMessage.parse(Self.sampleResponse())
        #expect(m.id == 0x1234 && m.isResponse && m.rcode == 0 && !m.truncated)
        #expect(m.questions.first?.name.text == "_openclaw-gw._tcp.example.")
        let inst = DNSName(labels: [Array("Home GW".utf8)] + (try DNSName(text: "_openclaw-gw._tcp.example.")).labels)
        // The names outside #expect: Swift 6.0's macro cannot hold a `try` on the right of ==.
        let service = try DNSName(text: "_openclaw-gw._tcp.example."), target = try DNSName(text: "gw.example.")
        #expect(m.answers == [.init(name: service, type: 12, ttl: 120, data: .ptr(inst))])
        #expect(m.additionals[0].data == .srv(priority: 0, weight: 5, port: 18789, target: target))
        #expect(m.additionals[1].data == .txt([Array("displayName=Home".utf8), Array("gatewayTls=1".utf8)]))
        #expect(m.additionals[2].data == .a("192.168.1.20"))
        #expect(m.additionals[3].data == .aaaa("fd00::1"))
        #expect(m.additionals[0].name == inst)
    }

    @Test func truncatedAndMalformedPacketsFailWithoutCrashing() {
        let full = Self.sampleResponse()
        for n in 0..<full.count {
            #expect(throws: DNSMessage.ParseError.self) { try DNSMessage.parse(Array(full.prefix(n))) }
        }
        // A pointer to itself and a forward pointer are refused, not followed forever.
        var loop = Array(full.prefix(12)); loop[5] = 1; loop[7] = 0; loop[11] = 0
        loop += [0xC0, 12, 0, 12, 0, 1]
        #expect(throws: DNSMessage.ParseError.self) { try DNSMessage.parse(loop) }
        var forward = Array(full.prefix(12)); forward[5] = 1; forward[7] = 0; forward[11] = 0
        forward += [0xC0, 20, 0, 12, 0, 1, 0, 0, 0, 0]
        #expect(throws: DNSMessage.ParseError.self) { try DNSMessage.parse(forward) }
        // An A record whose data is not 4 bytes, an rdlength past the end.
        var badA = Array(full.prefix(12)); badA[5] = 0; badA[7] = 1; badA[11] = 0
        badA += [0, 0, 1, 0, 1, 0, 0, 0, 1, 0, 3, 1, 2, 3]
        #expect(throws: DNSMessage.ParseError.self) { try DNSMessage.parse(badA) }
        badA[badA.count - 4] = 200
        #expect(throws: DNSMessage.ParseError.self) { try DNSMessage.parse(badA) }
        // Random garbage: any outcome but a crash or hang.
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<3000 {
            var p = full
            for _ in 0..<4 { p[Int.random(in: 0..<p.count, using: &rng)] = UInt8.random(in: 0...255, using: &rng) }
            _ = try? DNSMessage.parse(p)
            _ = try? DNSMessage.parse((0..<Int.random(in: 0..<80, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) })
        }
    }

    @Test func queryRoundTrips() throws {
        let name = try DNSName(text: "Home\\032GW._openclaw-gw._tcp.example.")
        let q = try DNSMessage.parse(DNSMessage.query(id: 7, name: name, type: .srv))
        #expect(q.id == 7 && !q.isResponse)
        #expect(q.questions.first?.name == name && q.questions.first?.type == 33)
        #expect(q.additionals.first?.type == 41) // EDNS0
    }

    func gw(_ name: String, display: String? = nil, source: DiscoveredGateway.Source = .lan, addrs: [String] = ["10.0.0.5"],
            tls: Bool = false) -> DiscoveredGateway {
        var t: [String] = []
        if let display { t.append("displayName=" + display) }
        if tls { t.append("gatewayTls=1") }
        return DiscoveredGateway(instanceName: name, domain: source == .lan ? "local." : "example.", source: source, host: "gw.local",
                                 addresses: addrs, port: 18789, txt: txt(t))
    }

    @Test func urlFromTheResolvedRecord() {
        #expect(gw("a").url?.absoluteString == "ws://10.0.0.5:18789")
        #expect(gw("a", tls: true).url?.absoluteString == "wss://10.0.0.5:18789")
        #expect(gw("a", addrs: ["fd00::5"]).url?.absoluteString == "ws://[fd00::5]:18789")
        #expect(gw("a", addrs: ["fd00::5", "10.0.0.9", "127.0.0.1", "10.0.0.9"]).addresses == ["127.0.0.1", "10.0.0.9", "fd00::5"])
        #expect(gw("a", addrs: []).url?.absoluteString == "ws://gw.local:18789")
        // A gateway only reachable by IPv6 link-local: the scoped address, as a last resort.
        #expect(gw("a", addrs: ["fe80::1%eth0"]).url?.absoluteString == "ws://[fe80::1%25eth0]:18789")
        #expect(gw("a", addrs: ["fe80::1%eth0"]).url?.host == "fe80::1%eth0")
        #expect(gw("a", addrs: ["fe80::1%eth0", "10.0.0.9"]).url?.absoluteString == "ws://10.0.0.9:18789")
        #expect(gw("Home GW").fullName == "Home\\032GW._openclaw-gw._tcp.local.")
    }

    @Test func selectionRules() {
        let a = gw("OpenClaw Home", display: "Home"), b = gw("OpenClaw Office", display: "Office")
        typealias S = GatewaySelection
        #expect(S.decide([a, b], name: "office", remembered: nil, settled: false) == .connect(b, reason: "its display name matches gateway.name \"office\""))
        #expect(S.decide([a, b], name: "openclaw office", remembered: nil, settled: false) == .connect(b, reason: "it matches gateway.name \"openclaw office\""))
        // TXT display names are unauthenticated: two claiming the configured name → wait; an
        // instance name match wins over another gateway's display name.
        let impostor = gw("Evil", display: "Office")
        if case .wait(let why) = S.decide([b, impostor], name: "Office", remembered: nil, settled: true) {
            #expect(why.contains("several gateways call themselves \"Office\""), "\(why)")
        } else { Issue.record("an ambiguous display name must not pick one") }
        let named = gw("Office", display: "Something")
        #expect(S.decide([impostor, named], name: "Office", remembered: nil, settled: true) == .connect(named, reason: "it matches gateway.name \"Office\""))
        #expect(S.decide([a, b], name: "OpenClaw\\032Home", remembered: nil, settled: true) == .connect(a, reason: "it matches gateway.name \"OpenClaw\\032Home\""))
        if case .wait(let why) = S.decide([a, b], name: "Garage", remembered: "OpenClaw Home", settled: true) {
            #expect(why.contains("no gateway named \"Garage\"") && why.contains("\"Home\"") && why.contains("\"Office\""))
        } else { Issue.record("a configured name that matches nothing must not fall back to another gateway") }
        #expect(S.decide([a, b], name: nil, remembered: "openclaw office", settled: false) == .connect(b, reason: "it was chosen before"))
        #expect(S.decide([a], name: nil, remembered: nil, settled: false) == .wait("found one gateway; waiting a moment for others"))
        #expect(S.decide([a], name: nil, remembered: nil, settled: true) == .connect(a, reason: "it is the only gateway found"))
        if case .wait(let why) = S.decide([a, b], name: nil, remembered: "gone", settled: true) {
            #expect(why.contains("found 2 gateways") && why.contains("gateway.name"))
        } else { Issue.record("two gateways and no name must wait") }
        // The same instance on the LAN and wide-area is one gateway; the LAN copy wins.
        let wide = gw("OpenClaw Home", display: "Home", source: .wideArea, addrs: ["100.64.0.2"])
        #expect(S.decide([a, wide], name: nil, remembered: nil, settled: true) == .connect(a, reason: "it is the only gateway found"))
        #expect(S.decide([], name: nil, remembered: nil, settled: true) == .wait("no gateway found yet"))
        // A remembered wide-area gateway is not replaced by a LAN announcement of the same name.
        #expect(S.decide([a, wide], name: nil, remembered: "OpenClaw Home", rememberedSource: .wideArea, settled: true)
                == .connect(wide, reason: "it was chosen before"))
    }

    /// A pinned certificate follows the remembered gateway to a new address, and forces wss://.
    @Test func rememberedPinFollowsTheGatewayAndForcesTLS() throws {
        let dir = TestPaths.tempDir("sel")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = try StateStore(stateDir: dir + "/state")
        let pin = String(repeating: "ab", count: 32)
        let before = gw("OpenClaw Home", display: "Home", addrs: ["10.0.0.5"], tls: true)
        try GatewaySelection.remember(before, in: store)
        try store.saveGateway(StateStore.GatewayRecord(gateway: "wss://10.0.0.5:18789", url: "wss://10.0.0.5:18789", tlsPin: pin))
        let log = Logger(component: "test")
        // New address, and the TXT record no longer says TLS.
        let moved = gw("OpenClaw Home", display: "Home", addrs: ["10.0.0.9"])
        let url = GatewaySelection.connectURL(for: moved, configuredPin: nil, store: store, log: log)
        #expect(url?.absoluteString == "wss://10.0.0.9:18789")
        #expect(try store.gateway("wss://10.0.0.9:18789")?.tlsPin == pin)
        // Another gateway gets no pin and keeps what it advertises.
        #expect(GatewaySelection.connectURL(for: gw("Other"), configuredPin: nil, store: store, log: log)?.absoluteString == "ws://10.0.0.5:18789")
        // A configured fingerprint also means wss://, and is not copied into the store.
        #expect(GatewaySelection.connectURL(for: gw("Other", addrs: ["10.0.0.7"]), configuredPin: pin, store: store, log: log)?.absoluteString == "wss://10.0.0.7:18789")
        #expect(try store.gateway("wss://10.0.0.7:18789") == nil)
    }

    @Test func advertisedFingerprintNeverOverridesAPin() {
        let (c, s, h) = ("cc", "ss", "hh")
        #expect(GatewayTrust.policy(configured: c, stored: s, hint: h, allowTOFU: true) == (.pinned(c), .configured))
        #expect(GatewayTrust.policy(configured: nil, stored: s, hint: h, allowTOFU: true) == (.pinned(s), .stored))
        #expect(GatewayTrust.policy(configured: nil, stored: nil, hint: h, allowTOFU: true) == (.pinned(h), .discoveryHint))
        #expect(GatewayTrust.policy(configured: nil, stored: nil, hint: nil, allowTOFU: true) == (.trustOnFirstUse, .firstUse))
        // Without trust-on-first-use the hint is not trust at all: the system store decides.
        #expect(GatewayTrust.policy(configured: nil, stored: nil, hint: h, allowTOFU: false) == (.system, .system))
    }

    @Test func nameserverSyntax() {
        #expect(HostPort("127.0.0.1:5354", defaultPort: 53) == HostPort(host: "127.0.0.1", port: 5354))
        #expect(HostPort("100.100.100.100", defaultPort: 53) == HostPort(host: "100.100.100.100", port: 53))
        #expect(HostPort("[::1]:5353", defaultPort: 53) == HostPort(host: "::1", port: 5353))
        #expect(HostPort("fd7a::53", defaultPort: 53) == HostPort(host: "fd7a::53", port: 53))
        #expect(HostPort("dns.lan:0", defaultPort: 53) == nil)
        #expect(HostPort("host:", defaultPort: 53) == nil)
        #expect(HostPort("", defaultPort: 53) == nil)
    }

    /// A server that never answers: the query gives up at its deadline (after one resend).
    @Test func silentNameserverTimesOutOnTime() async throws {
        let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        defer { close(fd) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, len) } }
        _ = withUnsafeMutablePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) } }
        let port = Int(UInt16(bigEndian: addr.sin_port))
        let client = try UDPDNSClient(server: "127.0.0.1:\(port)", timeout: .milliseconds(400))
        let start = ContinuousClock.now
        await #expect(throws: DNSQueryError.self) { try await client.query(DNSName(text: "_openclaw-gw._tcp.example."), .ptr) }
        let took = ContinuousClock.now - start
        // At its deadline, not before; the upper bound only tells a hang (a busy machine runs late).
        #expect(took >= .milliseconds(380) && took < .seconds(10), "\(took)")
        // Both the query and its resend reached the server.
        var buf = [UInt8](repeating: 0, count: 512)
        var got = 0
        while recv(fd, &buf, buf.count, Int32(MSG_DONTWAIT)) > 0 { got += 1 }
        #expect(got == 2)
    }

    @Test func wideAreaDomainFallsBackToTheEnvironment() throws {
        let env = ["HOME": "/tmp", "OPENCLAW_WIDE_AREA_DOMAIN": "env.example."]
        let fromEnv = try ConfigLoader.parse("{}", file: "t.json5", environment: env)
        #expect(fromEnv.gateway.wideAreaDomain == "env.example.")
        let fromFile = try ConfigLoader.parse("{ gateway: { discovery: { wideAreaDomain: 'file.example.' } } }", file: "t.json5", environment: env)
        #expect(fromFile.gateway.wideAreaDomain == "file.example.")
    }
}

struct DiscoveryConfigTests {
    @Test func discoveryKeysAreValidated() {
        do {
            _ = try ConfigLoader.parse("{ gateway: { discovery: { wideAreaDomain: 'a..b', nameserver: '127.0.0.1:99999' } } }", file: "t.json5")
            Issue.record("invalid discovery keys were accepted")
        } catch {
            #expect(error.description.contains("gateway.discovery.wideAreaDomain"), "\(error)")
            #expect(error.description.contains("gateway.discovery.nameserver"), "\(error)")
        }
    }
}
