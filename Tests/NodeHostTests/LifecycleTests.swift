@testable import Config
import Foundation
@testable import HostPresence
@testable import Kit
@testable import NodeCLI
@testable import Registry
@testable import Store
@testable import Support
@testable import TestSupport
import Testing

/// The capability lifecycle through the real executable: `availability()` is a question, and only
/// the daemon starts background work (`Capability.start`).
@Suite(.serialized) struct LifecycleTests {
    /// A listening socket on loopback that nobody accepts from: the kernel still completes a
    /// client's handshake into the backlog, so a non-blocking accept tells whether anyone came.
    final class Listener {
        let fd: Int32
        let port: Int
        init() throws {
            (fd, port) = try bindLoopback()
            guard listen(fd, 8) == 0 else { close(fd); throw TestFailure("listen failed") }
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        }
        var someoneConnected: Bool {
            let c = accept(fd, nil, nil)
            if c >= 0 { close(c); return true }
            return false
        }
        deinit { close(fd) }
    }

    @Test func oneShotCommandsStartNoBackgroundWork() throws {
        let gpsd = try Listener()
        let e = CLIEnv("capabilities: { location: { enabled: true, gpsd: '127.0.0.1:\(gpsd.port)' } }, " +
                             "plugins: { dirs: ['\(PluginTests.testPlugins)'], entries: { 'behave-ok': { enabled: true } } }")
        defer { e.cleanup() }
        for args in [["caps", "--json"], ["invoke", "device.info"], ["doctor"]] {
            // doctor checks that gpsd answers (a probe of its own, not the capability's watch).
            if args[0] == "doctor" { #expect(!gpsd.someoneConnected, "a one-shot command connected to gpsd") }
            let r = try e.run(args + ["--config", e.config])
            #expect(!r.stderr.contains("behave plugin started") && !r.stderr.contains("hello from behave"),
                    "\(args[0]) started the plugin: \(r.stderr)")
            if args[0] == "caps" {
                let doc = JSONValue.parse(r.stdout)
                #expect(doc?["commands"]?.arrayValue?.contains("location.get") == true, "\(r.stdout)")
                #expect(doc?["commands"]?.arrayValue?.contains("behaveok.echo") == true, "\(r.stdout)")
            }
        }
    }

    /// A SIGTERM while the daemon is still starting (systemctl stop right after start) is held
    /// until it is up, then stops it cleanly: exit 0, not death by the signal (143).
    @Test func sigtermDuringStartUpStopsCleanly() throws {
        let node = NodeUnderTest(gatewaySection: "discovery: { lan: false }",
                                 extra: "plugins: { dirs: ['\(PluginTests.testPlugins)'], entries: { 'behave-slowstart': { enabled: true } } }")
        defer { node.cleanup() }
        try node.start()
        // The plugin takes 2 s to say hello, so the daemon is mid-start-up for that long.
        #expect(waitUntil(timeout: 20) { node.log.contains("started") && node.log.contains("behave-slowstart") }, "\(node.log)")
        let daemon = try #require(node.process)
        kill(daemon.pid, SIGTERM)
        #expect(daemon.stop() == 0, "\(daemon.log.suffix(1500))")
        #expect(daemon.log.contains("received SIGTERM; stopping"), "\(daemon.log.suffix(1500))")
    }

    /// The signal mask of a /proc/<pid>/status line ("SigCgt:\t0000000000004003") as a bit set.
    static func signalSet(_ pid: Int32, _ field: String) -> UInt64? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = text.split(separator: "\n").first(where: { $0.hasPrefix(field + ":") }) else { return nil }
        return UInt64(line.dropFirst(field.count + 1).trimmingCharacters(in: .whitespaces), radix: 16)
    }

    /// SIGTERM, SIGINT and SIGHUP are caught by the daemon's handler (SignalRouter), not ignored:
    /// so a child it starts (here a plugin) comes up with their default actions and can be stopped
    /// by them, and SIGINT stops the daemon as cleanly as SIGTERM.
    @Test func signalsAreCaughtAndChildrenKeepTheirDefaults() throws {
        let node = NodeUnderTest(gatewaySection: "discovery: { lan: false }",
                                 extra: "plugins: { dirs: ['\(PluginTests.testPlugins)'], entries: { 'behave-ok': { enabled: true } } }")
        defer { node.cleanup() }
        try node.start()
        let daemon = try #require(node.process)
        #expect(waitUntil(timeout: 20) { node.log.contains("hello from behave") }, "\(node.log.suffix(1500))")
        let ours: UInt64 = 1 << (UInt64(SIGHUP) - 1) | 1 << (UInt64(SIGINT) - 1) | 1 << (UInt64(SIGTERM) - 1)
        let caught = try #require(Self.signalSet(daemon.pid, "SigCgt")), ignored = try #require(Self.signalSet(daemon.pid, "SigIgn"))
        #expect(caught & ours == ours && ignored & ours == 0, "SigCgt \(String(caught, radix: 16)) SigIgn \(String(ignored, radix: 16))")
        let children = try runProcess("/usr/bin/pgrep", ["-P", String(daemon.pid)]).stdout.split(separator: "\n").compactMap { Int32($0) }
        #expect(!children.isEmpty, "the plugin is not running: \(node.log.suffix(1500))")
        for child in children {
            let childIgnored = try #require(Self.signalSet(child, "SigIgn"))
            #expect(childIgnored & ours == 0, "child \(child) ignores \(String(childIgnored & ours, radix: 16))")
        }
        kill(daemon.pid, SIGINT)
        // Alone: stop() sends SIGTERM, and two signals taken by two threads at once race to the pipe.
        #expect(waitUntil(timeout: 10) { !daemon.isRunning }, "SIGINT did not stop the daemon: \(daemon.log.suffix(1500))")
        #expect(daemon.stop() == 0, "\(daemon.log.suffix(1500))")
        #expect(daemon.log.contains("received SIGINT; stopping"), "\(daemon.log.suffix(1500))")
    }

    @Test func daemonStartsTheGpsdWatchAndThePlugin() throws {
        let gpsd = try Listener()
        let node = NodeUnderTest(gatewaySection: "discovery: { lan: false }",
                                 extra: "capabilities: { location: { enabled: true, gpsd: '127.0.0.1:\(gpsd.port)' } }, " +
                                        "plugins: { dirs: ['\(PluginTests.testPlugins)'], entries: { 'behave-ok': { enabled: true } } }")
        defer { node.cleanup() }
        try node.start()
        #expect(waitUntil(timeout: 20) { gpsd.someoneConnected }, "the daemon did not watch gpsd: \(node.log)")
        #expect(waitUntil(timeout: 20) { node.log.contains("hello from behave") }, "the daemon did not start the plugin: \(node.log)")
        #expect(node.stop() == 0)
    }
}
