import Foundation
@testable import Support
@testable import TestSupport
import Testing

/// What an MCP server the node runs cannot do: write outside its directory under the sandbox, reach
/// the node's state, or see the daemon's secrets — next to what it must still be able to do.
@Suite(.serialized) struct McpServerAttackTests {
    @Test func aSandboxedServerCannotWriteOutsideItsDirectory() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/bwrap") else { throw TestFailure("bubblewrap is not installed") }
        let outside = (ProcessInfo.processInfo.environment["HOME"] ?? "/root") + "/.cache/openclaw-node/sandbox-probe-\(UUID().uuidString.prefix(8))"
        defer { try? FileManager.default.removeItem(atPath: outside) }
        var work = ""
        let r = try McpServersTests.rig { dir in
            work = dir + "/work"
            try? FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
            // The server's script inside its directory: bwrap's private /tmp hides a checkout under /tmp.
            try? FileManager.default.copyItem(atPath: McpServersTests.script, toPath: work + "/server.py")
            return "boxed: { command: '\(McpServersTests.python)', args: ['\(work)/server.py'], sandbox: 'bwrap', cwd: '\(work)' },"
        }
        defer { r.cleanup() }
        #expect(r.catalogue { $0.contains("boxed_write") } != nil, "\(r.node.log.suffix(3000))")
        let inside = try #require(r.call("boxed", "write", "{\"path\":\"\(work)/ok.txt\",\"text\":\"fine\"}"))
        #expect(inside["payload"]?["isError"] == nil, "\(inside)")
        #expect((try? String(contentsOfFile: work + "/ok.txt", encoding: .utf8)) == "fine")
        // The attack: writing where the daemon's user could, but the server may not.
        let escape = try #require(r.call("boxed", "write", "{\"path\":\"\(outside)\",\"text\":\"escaped\"}"))
        #expect(escape["payload"]?["isError"] == true, "\(escape)")
        #expect(!FileManager.default.fileExists(atPath: outside))
        // The node's state directory (the device key lives there) is an empty scratch space to it:
        // what it writes there never reaches the real one.
        let state = r.node.dir + "/state"
        _ = try #require(r.call("boxed", "write", "{\"path\":\"\(state)/planted\",\"text\":\"x\"}"))
        #expect(!FileManager.default.fileExists(atPath: state + "/planted"))
    }

    @Test func aServerSeesNoneOfTheDaemonsSecrets() throws {
        let r = try McpServersTests.rig(servers: { _ in McpServersTests.testServer("t", extra: "env: { TOOL_SETTING: 'on' }") },
                                        nodeEnv: ["DAEMON_ONLY_SECRET": "s3cret", "OPENCLAW_GATEWAY_TOKEN": "gateway-secret"])
        defer { r.cleanup() }
        #expect(r.catalogue { $0.contains("t_env_names") } != nil)
        let names = try #require(r.call("t", "env_names")?["payload"]?.firstText?.stringValue, "\(r.node.log.suffix(2000))")
        let vars = Set(names.split(separator: " ").map(String.init))
        // Its own variable and what programs expect arrive; the daemon's others never do.
        #expect(vars.contains("TOOL_SETTING") && vars.contains("PATH") && vars.contains("HOME"), "\(vars)")
        #expect(!vars.contains("OPENCLAW_NODE_LOG") && !vars.contains("DAEMON_ONLY_SECRET") && !vars.contains("OPENCLAW_GATEWAY_TOKEN"), "\(vars)")
    }

    /// sandboxNetwork: false for a server: no Unix socket on the host (a session bus would reach
    /// systemd-run --user outside the sandbox) — the same switch and filter as system.run's.
    @Test func aServerWithoutNetworkReachesNoSocket() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/bwrap") else { throw TestFailure("bubblewrap is not installed") }
        let outside = (ProcessInfo.processInfo.environment["HOME"] ?? "/root") + "/.cache/openclaw-node/sock-probe-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: outside, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: outside) }
        let listener = try UnixListener(outside + "/host.sock"); defer { listener.close() }
        var work = ""
        let r = try McpServersTests.rig { dir in
            work = dir + "/work"
            try? FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
            try? FileManager.default.copyItem(atPath: McpServersTests.script, toPath: work + "/server.py")
            return "boxed: { command: '\(McpServersTests.python)', args: ['\(work)/server.py'], sandbox: 'bwrap', sandboxNetwork: false, cwd: '\(work)' },"
                + "open: { command: '\(McpServersTests.python)', args: ['\(work)/server.py'], sandbox: 'bwrap', cwd: '\(work)' },"
        }
        defer { r.cleanup() }
        #expect(r.catalogue { $0.contains("boxed_unix_connect") && $0.contains("open_unix_connect") } != nil, "\(r.node.log.suffix(3000))")
        let boxed = try #require(r.call("boxed", "unix_connect", "{\"path\":\"\(outside)/host.sock\"}"))
        #expect(boxed["payload"]?.firstText == "refused 13", "\(boxed)")
        #expect(!listener.hasPendingConnection, "the sandboxed server reached the host's socket")
        // The control: with the network on, the same connect works.
        let open = try #require(r.call("open", "unix_connect", "{\"path\":\"\(outside)/host.sock\"}"))
        #expect(open["payload"]?.firstText == "connected", "\(open)")
    }

    /// A server's setsid child leaves its process group, but not the node's reaper: it ends with
    /// the server, and with the daemon.
    @Test func aDetachedChildOfAServerDoesNotOutliveIt() throws {
        let r = try McpServersTests.rig(servers: { _ in McpServersTests.testServer("t") })
        defer { r.cleanup() }
        #expect(r.catalogue { $0.contains("t_spawn_detached") } != nil, "\(r.node.log.suffix(3000))")
        let pidfile = r.dir + "/detached.pid"
        let started = try #require(r.call("t", "spawn_detached", "{\"pidfile\":\"\(pidfile)\"}"))
        #expect(started["payload"]?.firstText?.stringValue?.hasPrefix("started") == true, "\(started)")
        let pid = try #require(Int32((try? String(contentsOfFile: pidfile, encoding: .utf8)) ?? ""))
        #expect(kill(pid, 0) == 0, "the detached child runs")
        // The server crashes: what it left goes with it.
        _ = r.call("t", "crash")
        #expect(waitUntil(timeout: 10) { kill(pid, 0) != 0 }, "the setsid child of a crashed server still runs")
        // Again, and this time the daemon is killed outright.
        #expect(r.catalogue { $0.contains("t_spawn_detached") } != nil)
        _ = r.call("t", "spawn_detached", "{\"pidfile\":\"\(pidfile)\"}")
        let second = try #require(Int32((try? String(contentsOfFile: pidfile, encoding: .utf8)) ?? ""))
        #expect(second != pid && kill(second, 0) == 0)
        if let daemon = r.node.process?.pid { kill(daemon, SIGKILL) }
        #expect(waitUntil(timeout: 10) { kill(second, 0) != 0 }, "the setsid child outlived the daemon")
        if kill(second, 0) == 0 { kill(second, SIGKILL) }
    }

    /// The reaper a server runs under ends it when its parent *thread* ends (the parent-death
    /// signal is per thread): started from a cooperative-pool thread, an idle server was killed
    /// seconds later. Idle for 12 s, the server is the same process and answers.
    @Test func anIdleServerIsNotKilledWithTheThreadThatStartedIt() throws {
        let r = try McpServersTests.rig(servers: { _ in McpServersTests.testServer("t") })
        defer { r.cleanup() }
        #expect(r.catalogue { $0.contains("t_echo") } != nil, "\(r.node.log.suffix(3000))")
        Thread.sleep(forTimeInterval: 12)
        let echo = try #require(r.call("t", "echo", #"{"text":"still the same server"}"#))
        #expect(echo["payload"]?.firstText == "still the same server", "\(echo)")
        let starts = r.node.log.components(separatedBy: "started \(McpServersTests.python)").count - 1
        #expect(starts == 1 && !r.node.log.contains("restarting"), "the server was started \(starts) times: \(r.node.log.suffix(3000))")
    }
}
