@testable import Config
@testable import Discovery
import Foundation
@testable import HostPresence
@testable import Kit
@testable import NodeCLI
@testable import Registry
@testable import Store
@testable import Support
@testable import TestSupport
import Testing

/// `discover --json` with a timeout well beyond what any answer here takes: a test that says it
/// ends early (avahi's all-for-now, a refused port, no bus) judges that against this 20 s, with
/// room for a busy machine, instead of against a few seconds.
private let discoverTimeout = "20"
private let endsEarly: TimeInterval = 10

private func discoverJSON(_ node: NodeUnderTest, _ extra: [String] = []) throws -> (ProcessResult, JSONValue) {
    let r = try node.cli(["discover", "--json", "--timeout", discoverTimeout] + extra)
    guard let v = JSONValue.parse(r.stdout) else { throw TestFailure("discover printed no JSON (exit \(r.code)):\n\(r.stdout)\n\(r.stderr)") }
    return (r, v)
}

/// CPU seconds (user + system) a process has used so far, from /proc/PID/stat.
private func cpuSeconds(_ pid: Int32) -> Double {
    guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
          let close = stat.lastIndex(of: ")") else { return -1 }
    let fields = stat[stat.index(close, offsetBy: 2)...].split(separator: " ")
    guard fields.count > 12, let u = Double(fields[11]), let s = Double(fields[12]) else { return -1 }
    return (u + s) / Double(sysconf(Int32(_SC_CLK_TCK)))
}

/// LAN discovery against a real avahi-daemon (in a loopback-only network namespace, on a private
/// bus) with services published by avahi-publish, and the node connecting to the test gateway.
@Suite(.serialized, .enabled(if: AvahiNetns.available, "needs root, avahi-daemon, avahi-utils, dbus, iproute2"))
struct DiscoveryLANTests {
    @Test func discoverResolvesAPublishedGatewayAndSkipsBadTXT() throws {
        let av = try AvahiNetns(); defer { av.stop() }
        try av.publish("OpenClaw Test GW", port: 18789,
                       txt: ["role=gateway", "transport=gateway", "displayName=Test GW", "gatewayPort=18789", "lanHost=vm.local",
                             "=novalue", "canvasPort=notaport", "displayName=Second"])
        let node = NodeUnderTest(gatewaySection: ""); defer { node.cleanup() }
        node.extraEnv = av.env
        let (r, v) = try discoverJSON(node)
        #expect(r.code == 0, "\(r.stderr)")
        #expect(v["paths"]?["lan"]?["status"] == "ok")
        #expect(v["paths"]?["wideArea"]?["status"] == "off")
        let gws = try #require(v["gateways"]?.arrayValue)
        #expect(gws.count == 1)
        let g = try #require(gws.first)
        #expect(g["instanceName"] == "OpenClaw Test GW")
        #expect(g["fullName"] == "OpenClaw\\032Test\\032GW._openclaw-gw._tcp.local.")
        #expect(g["displayName"] == "Test GW")
        #expect(g["source"] == "lan")
        #expect(g["port"] == 18789)
        #expect(g["addresses"] == ["127.0.0.1"])
        #expect(g["url"] == "ws://127.0.0.1:18789")
        #expect(g["tls"] == false)
        #expect(g["txt"]?["role"] == "gateway")
        #expect(g["txt"]?["displayName"] == "Test GW")
        let notes = g["notes"]?.arrayValue?.compactMap(\.stringValue) ?? []
        #expect(notes.contains { $0.contains("no key") }, "\(notes)")
        #expect(notes.contains { $0.contains("canvasPort=notaport") }, "\(notes)")
        #expect(notes.contains { $0.contains("repeated TXT key displayName") }, "\(notes)")
        // avahi reports everything it knows after about a second; discover stops then.
        #expect((v["elapsedMs"]?.doubleValue ?? 99_999) < endsEarly * 1000, "\(v["elapsedMs"] ?? nil)")

        let human = try node.cli(["discover", "--timeout", "4"])
        #expect(human.stdout.contains("Test GW [OpenClaw Test GW]"))
        #expect(human.stdout.contains("url:       ws://127.0.0.1:18789"))
    }

    @Test func runConnectsThroughLANAndRemembersTheChoice() throws {
        let av = try AvahiNetns(); defer { av.stop() }
        let gw = try TestGateway(stateFile: TestPaths.tempDir("gw") + "/gateway.json", args: ["--auto-approve"]); defer { gw.stop() }
        try av.publish("OpenClaw Home", port: gw.port, txt: ["role=gateway", "displayName=Home", "gatewayPort=\(gw.port)"])
        let node = NodeUnderTest(gatewaySection: ""); defer { node.cleanup() }
        node.extraEnv = av.env
        try node.start()
        let hello = try #require(gw.waitFor("hello", timeout: 20), "node log:\n\(node.log)")
        #expect(hello["auth"] != nil)
        #expect(node.log.contains("chose gateway \"Home\" at ws://127.0.0.1:\(gw.port) (LAN) because it is the only gateway found"), "\(node.log)")
        #expect(waitUntil(timeout: 10) { (try? node.status())?["daemon"]?["connected"] == true })
        #expect(node.stop() == 0)
        let store = try StateStore(stateDir: node.dir + "/state")
        #expect(GatewaySelection.remembered(in: store) == "OpenClaw Home")

        // A second gateway appears. With two and no gateway.name the node would wait; it picks the
        // one it chose before, at once.
        try av.publish("OpenClaw Office", port: 9, txt: ["displayName=Office"])
        try node.start()
        let again = try #require(gw.waitFor("hello", timeout: 20), "node log:\n\(node.log)")
        #expect(again["auth"] == ["deviceToken"])
        #expect(node.log.contains("because it was chosen before"), "\(node.log)")
        #expect(gw.schemaErrors.isEmpty, "\(gw.schemaErrors)")
    }

    /// avahi-daemon restarts while `run` is still looking (an upgrade, `systemctl restart`): the
    /// node reconnects to the new daemon and finds the gateway published there.
    @Test func runSurvivesAnAvahiRestart() throws {
        let av = try AvahiNetns(); defer { av.stop() }
        let gw = try TestGateway(stateFile: TestPaths.tempDir("gw") + "/gateway.json", args: ["--auto-approve"]); defer { gw.stop() }
        let node = NodeUnderTest(gatewaySection: ""); defer { node.cleanup() }
        node.extraEnv = av.env
        try node.start()
        #expect(waitUntil(timeout: 10) { node.log.contains("no gateway found yet") }, "\(node.log)")
        try av.restartDaemon()
        try av.publish("OpenClaw Home", port: gw.port, txt: ["displayName=Home"])
        _ = try #require(gw.waitFor("hello", timeout: 30), "node log:\n\(node.log)")
        #expect(node.isRunning)
    }

    @Test func severalGatewaysAndNoNameWaitsThenGatewayNamePicks() throws {
        let av = try AvahiNetns(); defer { av.stop() }
        let gw = try TestGateway(stateFile: TestPaths.tempDir("gw") + "/gateway.json", args: ["--auto-approve"]); defer { gw.stop() }
        try av.publish("OpenClaw Home", port: gw.port, txt: ["displayName=Home"])
        try av.publish("OpenClaw Office", port: 9, txt: ["displayName=Office"])
        let waiting = NodeUnderTest(gatewaySection: ""); defer { waiting.cleanup() }
        waiting.extraEnv = av.env
        try waiting.start()
        #expect(waitUntil(timeout: 10) { waiting.log.contains("waiting for a gateway: found 2 gateways") }, "\(waiting.log)")
        #expect(waitUntil(timeout: 5) { ((try? waiting.status())?["daemon"]?["connection"]?.stringValue ?? "").contains("looking for a gateway") })
        #expect(gw.all("connect").isEmpty)
        waiting.stop()

        let named = NodeUnderTest(gatewaySection: "name: 'home'"); defer { named.cleanup() }
        named.extraEnv = av.env
        try named.start()
        #expect(gw.waitFor("hello", timeout: 20) != nil, "node log:\n\(named.log)")
        #expect(named.log.contains("because its display name matches gateway.name \"home\""), "\(named.log)")
    }

    @Test func aVanishedServiceIsGoneFromTheResults() throws {
        let av = try AvahiNetns(); defer { av.stop() }
        let pub = try av.publish("OpenClaw Short-lived", port: 18789, txt: ["displayName=Short"])
        let node = NodeUnderTest(gatewaySection: ""); defer { node.cleanup() }
        node.extraEnv = av.env
        #expect(try discoverJSON(node).1["gateways"]?.arrayValue?.count == 1)
        pub.stop()
        let (r, v) = try discoverJSON(node)
        #expect(r.code == 1)
        #expect(v["gateways"] == [])
        #expect(v["paths"]?["lan"]?["status"] == "ok")
    }

    @Test func runForgetsAVanishedGatewayBeforeChoosing() throws {
        // Published, then withdrawn while the node browses: the node must not connect to it.
        let av = try AvahiNetns(); defer { av.stop() }
        let gw = try TestGateway(stateFile: TestPaths.tempDir("gw") + "/gateway.json", args: ["--auto-approve"]); defer { gw.stop() }
        try av.publish("OpenClaw A", port: gw.port, txt: ["displayName=A"])
        let b = try av.publish("OpenClaw B", port: gw.port, txt: ["displayName=B"])
        let node = NodeUnderTest(gatewaySection: ""); defer { node.cleanup() }
        node.extraEnv = av.env
        try node.start()
        #expect(waitUntil(timeout: 10) { node.log.contains("found 2 gateways") }, "\(node.log)")
        b.stop()
        #expect(gw.waitFor("hello", timeout: 20) != nil, "node log:\n\(node.log)")
        #expect(node.log.contains("chose gateway \"A\""), "\(node.log)")
    }

    @Test func oneServiceOnTwoInterfacesIsOneGateway() throws {
        let av = try AvahiNetns(extraInterfaces: 1); defer { av.stop() }
        try av.publish("OpenClaw Twice", port: 18789, txt: ["displayName=Twice"])
        let node = NodeUnderTest(gatewaySection: ""); defer { node.cleanup() }
        node.extraEnv = av.env
        let (r, v) = try discoverJSON(node)
        #expect(r.code == 0)
        let gws = try #require(v["gateways"]?.arrayValue)
        #expect(gws.count == 1, "\(gws)")
        let g = try #require(gws.first)
        #expect(g["interfaces"]?.arrayValue?.count == 2, "\(g)")
        #expect(g["addresses"] == ["127.0.0.1", "10.99.0.1"], "\(g)")
        #expect(g["url"] == "ws://127.0.0.1:18789")
    }
}

/// No avahi-daemon, or no system bus at all: one clear message, a fast exit, no spinning.
@Suite(.serialized, .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/dbus-daemon"), "needs dbus-daemon"))
struct DiscoveryMissingDaemonTests {
    @Test func noSystemBusSaysWhatToDoAndExitsFast() throws {
        let node = NodeUnderTest(gatewaySection: ""); defer { node.cleanup() }
        node.extraEnv = ["DBUS_SYSTEM_BUS_ADDRESS": "unix:path=\(node.dir)/no-such-bus"]
        let start = Date()
        let (r, v) = try discoverJSON(node)
        #expect(Date().timeIntervalSince(start) < endsEarly)
        #expect(r.code == 1)
        #expect(v["paths"]?["lan"]?["status"] == "unavailable")
        let why = v["paths"]?["lan"]?["reason"]?.stringValue ?? ""
        #expect(why.contains("cannot talk to avahi-daemon") && why.contains("no-such-bus") && why.contains("apt install avahi-daemon"), "\(why)")
        #expect(!r.stderr.contains("Fatal"), "\(r.stderr)")
    }

    @Test func busWithoutAvahiDaemonSaysSo() throws {
        let bus = try PrivateBus(); defer { bus.stop() }
        let node = NodeUnderTest(gatewaySection: ""); defer { node.cleanup() }
        node.extraEnv = ["DBUS_SYSTEM_BUS_ADDRESS": bus.address]
        let start = Date()
        let r = try node.cli(["discover", "--timeout", discoverTimeout])
        #expect(Date().timeIntervalSince(start) < endsEarly)
        #expect(r.code == 1)
        #expect(r.stdout.contains("LAN (mDNS, local.): unavailable: avahi-daemon is not running"), "\(r.stdout)")
        #expect(r.stdout.contains("No gateway found"))
    }

    @Test func runWithoutBusLogsOnceAndIdles() throws {
        let node = NodeUnderTest(gatewaySection: ""); defer { node.cleanup() }
        node.extraEnv = ["DBUS_SYSTEM_BUS_ADDRESS": "unix:path=\(node.dir)/no-such-bus"]
        try node.start()
        #expect(waitUntil(timeout: 10) { node.log.contains("LAN discovery unavailable") }, "\(node.log)")
        let pid = try #require(node.process?.pid)
        let cpuBefore = cpuSeconds(pid)
        Thread.sleep(forTimeInterval: 2)
        let used = cpuSeconds(pid) - cpuBefore
        #expect(used >= 0 && used < 0.3, "the node used \(used) s of CPU in 2 s while waiting")
        #expect(node.isRunning)
        #expect(node.log.components(separatedBy: "LAN discovery unavailable").count == 2, "\(node.log)")
        let st = try #require(try node.status())
        #expect(st["daemon"]?["connection"]?.stringValue?.contains("looking for a gateway") == true, "\(st)")
        #expect(node.stop() == 0)
    }

    @Test func aConfiguredURLSkipsDiscovery() throws {
        let gw = try TestGateway(stateFile: TestPaths.tempDir("gw") + "/gateway.json", args: ["--auto-approve"]); defer { gw.stop() }
        let node = NodeUnderTest(gatewaySection: "url: '\(gw.url)', name: 'elsewhere', discovery: { wideAreaDomain: 'example.', nameserver: '127.0.0.1:9' }")
        defer { node.cleanup() }
        try node.start()
        #expect(gw.waitFor("hello", timeout: 20) != nil, "node log:\n\(node.log)")
        #expect(!node.log.contains("looking for a gateway"), "\(node.log)")
        let r = try node.cli(["discover", "--timeout", "1"])
        #expect(r.stdout.contains("gateway.url is set (\(gw.url)): `run` connects to it and skips discovery"), "\(r.stdout)")
    }
}

/// Wide-area DNS-SD against dnsmasq serving the zone on loopback.
@Suite(.serialized, .enabled(if: DnsmasqZone.available, "needs dnsmasq (Debian package dnsmasq-base)"))
struct DiscoveryWideAreaTests {
    static func zone(port: Int, domain: String = "openclaw.internal") -> [String] {
        let svc = "_openclaw-gw._tcp.\(domain)"
        return [
            "--ptr-record=\(svc),office-gw.\(svc)",
            "--srv-host=office-gw.\(svc),gw.\(domain),\(port),0,0",
            "--txt-record=office-gw.\(svc),role=gateway,displayName=Office GW,gatewayPort=\(port),=bad",
            "--host-record=gw.\(domain),127.0.0.1",
            // Listed but not resolvable (no SRV): reported, not fatal.
            "--ptr-record=\(svc),broken.\(svc)",
        ]
    }

    @Test func discoverFindsTheZone() throws {
        let dns = try DnsmasqZone(records: Self.zone(port: 18789)); defer { dns.stop() }
        let node = NodeUnderTest(gatewaySection: "discovery: { lan: false, wideAreaDomain: 'openclaw.internal.', nameserver: '\(dns.nameserver)' }")
        defer { node.cleanup() }
        let (r, v) = try discoverJSON(node)
        #expect(r.code == 0, "\(r.stdout)\(r.stderr)")
        #expect(v["paths"]?["lan"]?["status"] == "off")
        #expect(v["paths"]?["wideArea"]?["status"] == "ok")
        let gws = try #require(v["gateways"]?.arrayValue)
        #expect(gws.count == 1)
        let g = try #require(gws.first)
        #expect(g["instanceName"] == "office-gw")
        #expect(g["displayName"] == "Office GW")
        #expect(g["source"] == "wideArea")
        #expect(g["host"] == "gw.openclaw.internal")
        #expect(g["addresses"] == ["127.0.0.1"])
        #expect(g["url"] == "ws://127.0.0.1:18789")
        #expect(g["domain"] == "openclaw.internal.")
        #expect(g["notes"]?.arrayValue?.first?.stringValue?.contains("no key") == true, "\(g)")
        let pathNotes = v["paths"]?["wideArea"]?["notes"]?.arrayValue?.compactMap(\.stringValue) ?? []
        #expect(pathNotes.contains { $0.hasPrefix("broken._openclaw-gw._tcp.openclaw.internal.") }, "\(pathNotes)")
        #expect((v["elapsedMs"]?.doubleValue ?? 99_999) < endsEarly * 1000)
    }

    @Test func runConnectsThroughWideAreaDNS() throws {
        let gw = try TestGateway(stateFile: TestPaths.tempDir("gw") + "/gateway.json", args: ["--auto-approve"]); defer { gw.stop() }
        let dns = try DnsmasqZone(records: Self.zone(port: gw.port)); defer { dns.stop() }
        let node = NodeUnderTest(gatewaySection: "discovery: { lan: false, nameserver: '\(dns.nameserver)' }"); defer { node.cleanup() }
        node.extraEnv = ["OPENCLAW_WIDE_AREA_DOMAIN": "openclaw.internal."]
        try node.start()
        #expect(gw.waitFor("hello", timeout: 20) != nil, "node log:\n\(node.log)")
        #expect(node.log.contains("chose gateway \"Office GW\" at ws://127.0.0.1:\(gw.port) (wide-area)"), "\(node.log)")
        let store = try StateStore(stateDir: node.dir + "/state")
        #expect(GatewaySelection.remembered(in: store) == "office-gw")
    }

    @Test func emptyZoneAndDeadServerAreReportedNotFatal() throws {
        let dns = try DnsmasqZone(records: ["--local=/example/", "--host-record=unrelated.example,127.0.0.1"]); defer { dns.stop() }
        let empty = NodeUnderTest(gatewaySection: "discovery: { lan: false, wideAreaDomain: 'example.', nameserver: '\(dns.nameserver)' }")
        defer { empty.cleanup() }
        let (r, v) = try discoverJSON(empty)
        #expect(r.code == 1)
        #expect(v["paths"]?["wideArea"]?["status"] == "ok")
        #expect(v["gateways"] == [])

        dns.stop() // nothing listens on that port any more: ICMP port unreachable → a quick, clear error
        let start = Date()
        let (r2, v2) = try discoverJSON(empty)
        #expect(r2.code == 1)
        #expect(v2["paths"]?["wideArea"]?["status"] == "unavailable")
        #expect(v2["paths"]?["wideArea"]?["reason"]?.stringValue?.contains(dns.nameserver) == true, "\(v2)")
        // Refused at once, not a query that waited out its 2 s: the reason says which.
        #expect(v2["paths"]?["wideArea"]?["reason"]?.stringValue?.contains("no DNS server at \(dns.nameserver): Connection refused") == true, "\(v2)")
        #expect(Date().timeIntervalSince(start) < endsEarly)
    }

    /// The system resolver path (res_nquery, no nameserver key): inside a network namespace
    /// whose /etc/resolv.conf (ip netns exec bind-mounts /etc/netns/NAME/resolv.conf) points at
    /// dnsmasq on the namespace's port 53.
    @Test(.enabled(if: AvahiNetns.available, "needs root and iproute2"))
    func systemResolverPath() throws {
        let ns = "ocn-dns-\(UUID().uuidString.prefix(8).lowercased())"
        let etc = "/etc/netns/\(ns)"
        let hadEtcNetns = FileManager.default.fileExists(atPath: "/etc/netns")
        try FileManager.default.createDirectory(atPath: etc, withIntermediateDirectories: true)
        defer {
            _ = try? runProcess("/usr/sbin/ip", ["netns", "del", ns])
            try? FileManager.default.removeItem(atPath: etc)
            if !hadEtcNetns { rmdir("/etc/netns") }
        }
        _ = FileManager.default.createFile(atPath: etc + "/resolv.conf", contents: Data("nameserver 127.0.0.1\noptions timeout:1 attempts:1\n".utf8))
        #expect(try runProcess("/usr/sbin/ip", ["netns", "add", ns]).code == 0)
        #expect(try runProcess("/usr/sbin/ip", ["-n", ns, "link", "set", "lo", "up"]).code == 0)
        let dns = try BackgroundProcess("/usr/sbin/ip", ["netns", "exec", ns, DnsmasqZone.binary, "--no-daemon", "-C", "/dev/null", "--port=53",
                                                         "--listen-address=127.0.0.1", "--bind-interfaces", "--no-resolv", "--no-hosts"]
                                        + Self.zone(port: 18789))
        defer { dns.stop() }
        #expect(waitUntil(timeout: 5) { dns.log.contains("cleared cache") }, "\(dns.log)")
        let node = NodeUnderTest(gatewaySection: "discovery: { lan: false, wideAreaDomain: 'openclaw.internal.' }"); defer { node.cleanup() }
        let r = try runProcess("/usr/sbin/ip", ["netns", "exec", ns, TestPaths.nodeBinary, "discover", "--json", "--config", node.configPath], env: node.env)
        let v = try #require(JSONValue.parse(r.stdout), "\(r.stdout)\(r.stderr)")
        #expect(v["paths"]?["wideArea"]?["status"] == "ok", "\(v)")
        #expect(v["gateways"]?.arrayValue?.first?["url"] == "ws://127.0.0.1:18789", "\(v)")
    }
}
