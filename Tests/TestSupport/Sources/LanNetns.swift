import Foundation

/// A network namespace standing in for a LAN, for servers that must listen beyond loopback: `lo`
/// and a veth pair whose ends are 10.98.0.1/24 and 10.98.0.2/24, both inside it. A server bound
/// to `serverAddress` is reached on a non-loopback address, and no packet leaves the namespace.
/// Programs run inside it through `ip netns exec` (which execs them: their PID is the program's);
/// `stop()` deletes it.
final class LanNetns: @unchecked Sendable {
    static let ip = "/usr/sbin/ip"
    static var available: Bool { getuid() == 0 && FileManager.default.isExecutableFile(atPath: ip) }

    let name = "ocn-lan-\(UUID().uuidString.prefix(8).lowercased())"
    let serverAddress = "10.98.0.1"
    let clientAddress = "10.98.0.2"

    init() throws {
        try Self.run(["netns", "add", name])
        do {
            try Self.run(["-n", name, "link", "set", "lo", "up"])
            try Self.run(["-n", name, "link", "add", "lan0", "type", "veth", "peer", "name", "lan1"])
            try Self.run(["-n", name, "addr", "add", serverAddress + "/24", "dev", "lan0"])
            try Self.run(["-n", name, "addr", "add", clientAddress + "/24", "dev", "lan1"])
            try Self.run(["-n", name, "link", "set", "lan0", "up"])
            try Self.run(["-n", name, "link", "set", "lan1", "up"])
        } catch {
            stop()
            throw error
        }
    }

    /// The command line that runs `program` inside the namespace.
    func inside(_ program: String, _ args: [String]) -> (path: String, args: [String]) {
        (Self.ip, ["netns", "exec", name, program] + args)
    }

    func stop() { _ = try? runProcess(Self.ip, ["netns", "del", name], timeout: 10) }

    private static func run(_ args: [String]) throws {
        let r = try runProcess(ip, args, timeout: 10)
        guard r.code == 0 else { throw TestFailure("ip \(args.joined(separator: " ")) failed: \(r.stderr)") }
    }
}
