@testable import Config
@testable import Discovery
import Foundation
@testable import HostPresence
@testable import Kit
@testable import NodeCLI
@testable import Registry
@testable import Store
@testable import Support

/// A real avahi-daemon for one test, without touching the machine's network or system bus
/// (measured on Debian 12):
///   - a network namespace with only `lo` (multicast on), so no mDNS packet leaves it;
///   - a private dbus-daemon (PrivateBus) that stands in for the system bus — the node and
///     avahi-publish run outside the namespace and reach the daemon through this bus socket;
///   - avahi-daemon inside the namespace, in its own mount namespace with a tmpfs on /run: it
///     insists on /run/avahi-daemon for its pid file and socket, and this way every test gets its
///     own, nothing is left behind on the host, and tests could even run side by side.
/// avahi-daemon's host name resolves to 127.0.0.1 (the namespace's only address), which is also
/// the host's loopback, where the test gateway listens. Everything is stopped by PID and the
/// namespace deleted in `stop()`.
final class AvahiNetns: @unchecked Sendable {
    static let tools = ["/usr/sbin/avahi-daemon", "/usr/bin/avahi-publish", "/usr/bin/dbus-daemon", "/usr/sbin/ip", "/usr/bin/unshare"]
    static var available: Bool { getuid() == 0 && tools.allSatisfy { FileManager.default.isExecutableFile(atPath: $0) } }

    let netns: String
    let bus: PrivateBus
    let dir: String
    private(set) var daemon: BackgroundProcess?
    private var publishers: [BackgroundProcess] = []

    /// `extraInterfaces`: veth pairs inside the namespace that avahi also serves (each end gets
    /// 10.99.N.1/2), so one service shows up on several interfaces.
    init(extraInterfaces: Int = 0) throws {
        netns = "ocn-av-\(UUID().uuidString.prefix(8).lowercased())"
        dir = TestPaths.tempDir("avahi")
        bus = try PrivateBus()
        do {
            try AvahiNetns.ip(["netns", "add", netns])
            try AvahiNetns.ip(["-n", netns, "link", "set", "lo", "up"])
            try AvahiNetns.ip(["-n", netns, "link", "set", "lo", "multicast", "on"])
            var allow = ["lo"]
            for i in 0..<extraInterfaces {
                let (a, b) = ("ocnv\(i)a", "ocnv\(i)b")
                try AvahiNetns.ip(["-n", netns, "link", "add", a, "type", "veth", "peer", "name", b])
                try AvahiNetns.ip(["-n", netns, "addr", "add", "10.99.\(i).1/24", "dev", a])
                try AvahiNetns.ip(["-n", netns, "addr", "add", "10.99.\(i).2/24", "dev", b])
                try AvahiNetns.ip(["-n", netns, "link", "set", a, "up"])
                try AvahiNetns.ip(["-n", netns, "link", "set", b, "up"])
                allow.append(a)
            }
            let conf = """
                [server]
                use-ipv4=yes
                use-ipv6=no
                allow-interfaces=\(allow.joined(separator: ","))
                enable-dbus=yes
                ratelimit-interval-usec=1000000
                ratelimit-burst=1000
                [wide-area]
                enable-wide-area=no
                [publish]
                publish-workstation=no
                publish-hinfo=no
                [reflector]
                [rlimits]
                """
            _ = FileManager.default.createFile(atPath: dir + "/avahi-daemon.conf", contents: Data(conf.utf8))
            try startDaemon()
        } catch {
            stop()
            throw error
        }
    }

    private func startDaemon() throws {
        let d = try BackgroundProcess("/usr/sbin/ip", ["netns", "exec", netns, "/usr/bin/unshare", "--mount", "/bin/sh", "-c",
                                                       "mount -t tmpfs ocn-avahi /run && exec /usr/sbin/avahi-daemon -f \(dir)/avahi-daemon.conf --no-chroot --no-drop-root --no-rlimits"],
                                      env: env)
        daemon = d
        guard waitUntil(timeout: 10, { d.log.contains("Server startup complete") || !d.isRunning }), d.isRunning else {
            throw TestFailure("avahi-daemon did not start:\n\(d.log)")
        }
    }

    /// Stops avahi-daemon (its publishers with it) and starts a new one, as `systemctl restart` would.
    func restartDaemon() throws {
        for p in publishers { p.stop() }
        publishers.removeAll()
        daemon?.stop()
        daemon = nil
        try startDaemon()
    }

    /// Environment that points avahi clients (the node, avahi-publish) at the private bus.
    var env: [String: String] {
        ["DBUS_SYSTEM_BUS_ADDRESS": bus.address, "PATH": "/usr/sbin:/usr/bin:/sbin:/bin"]
    }

    /// `avahi-publish -s NAME _openclaw-gw._tcp PORT TXT…`, waiting until avahi has registered it.
    @discardableResult
    func publish(_ name: String, port: Int, txt: [String]) throws -> BackgroundProcess {
        let p = try BackgroundProcess("/usr/bin/avahi-publish", ["-s", name, DiscoveredGateway.serviceType, String(port)] + txt, env: env)
        guard waitUntil(timeout: 10, { p.log.contains("Established under name") || !p.isRunning }), p.isRunning else {
            throw TestFailure("avahi-publish failed:\n\(p.log)")
        }
        publishers.append(p)
        return p
    }

    func stop() {
        for p in publishers { p.stop() }
        publishers.removeAll()
        daemon?.stop()
        daemon = nil
        _ = try? runProcess("/usr/sbin/ip", ["netns", "del", netns])
        bus.stop()
        try? FileManager.default.removeItem(atPath: dir)
    }

    private static func ip(_ args: [String]) throws {
        let r = try runProcess("/usr/sbin/ip", args, timeout: 10)
        guard r.code == 0 else { throw TestFailure("ip \(args.joined(separator: " ")) failed: \(r.stderr)") }
    }
}

/// dnsmasq serving a wide-area DNS-SD zone on a free loopback UDP port.
final class DnsmasqZone: @unchecked Sendable {
    static let binary = "/usr/sbin/dnsmasq"
    static var available: Bool { FileManager.default.isExecutableFile(atPath: binary) }

    let port: Int
    let process: BackgroundProcess

    /// `records`: dnsmasq options such as `--ptr-record=…`, `--srv-host=…`, `--txt-record=…`.
    init(records: [String]) throws {
        var last = ""
        for _ in 0..<20 {
            let port = try freeLoopbackPort(udp: true)  // dnsmasq may still lose the port: retried
            let p = try BackgroundProcess(DnsmasqZone.binary, ["--no-daemon", "-C", "/dev/null", "--port=\(port)", "--listen-address=127.0.0.1",
                                                              "--bind-interfaces", "--no-resolv", "--no-hosts"] + records)
            if waitUntil(timeout: 5, { p.log.contains("cleared cache") || !p.isRunning }), p.isRunning {
                self.port = port
                process = p
                return
            }
            last = p.log
            p.stop()
        }
        throw TestFailure("dnsmasq did not start: \(last)")
    }

    var nameserver: String { "127.0.0.1:\(port)" }

    func stop() { process.stop() }
}
