@testable import DeviceInfo
import Foundation
@testable import Support
@testable import TestSupport
import Testing

/// node.host.stats through the real daemon and the test gateway (which checks each payload against
/// the closed 2026.8 schema, free ≤ total included), and how the node takes node.event answers of
/// handled:false: an answer, logged once, never sent again because of it.
@Suite(.serialized) struct HostStatsTests {
    static func rig(_ args: [String] = []) throws -> (TestGateway, NodeUnderTest) {
        let gw = try TestGateway(stateFile: TestPaths.tempDir("gw") + "/gw.json", args: ["--auto-approve"] + args)
        let node = NodeUnderTest(gatewayURL: gw.url)
        // A 300 ms period instead of 60 s (documented in docs/PROTOCOL.md for tests).
        node.extraEnv["OPENCLAW_NODE_HOST_STATS_INTERVAL_MS"] = "300"
        try node.start()
        guard gw.waitFor("hello") != nil else { throw TestFailure("no hello: \(node.log)") }
        return (gw, node)
    }

    @Test func sentAfterHelloAndThenEveryPeriodInTheClosedShape() throws {
        let (gw, node) = try Self.rig(); defer { node.cleanup(); gw.stop() }
        let first = try #require(gw.waitFor("node_event") { $0["name"] == "node.host.stats" }, "\(node.log)")
        for _ in 0..<3 {
            #expect(gw.waitFor("node_event", timeout: 20) { $0["name"] == "node.host.stats" } != nil, "\(node.log.suffix(2000))")
        }
        let p = try #require(first["payload"]?.objectValue)
        let allowed: Set<String> = ["cpuCount", "loadAverage", "memoryTotalBytes", "memoryFreeBytes", "diskTotalBytes", "diskAvailableBytes"]
        #expect(Set(p.keys).isSubset(of: allowed), "\(p)")
        #expect((1...4096).contains(p["cpuCount"]?.intValue ?? 0))
        #expect((p["memoryTotalBytes"]?.intValue ?? 0) > 0)
        #expect((p["memoryFreeBytes"]?.intValue ?? -1) <= (p["memoryTotalBytes"]?.intValue ?? 0))
        // The state directory's filesystem, both numbers or neither.
        #expect(p["diskTotalBytes"] != nil && p["diskAvailableBytes"] != nil, "\(p)")
        if let loads = p["loadAverage"]?.arrayValue { #expect(loads.count == 3) }
        #expect(gw.schemaErrors.isEmpty, "\(gw.schemaErrors)")
        #expect(gw.all("gateway_schema_error").isEmpty)
    }

    @Test func handledFalseIsAnAnswerLoggedOnceAndNotRetried() throws {
        let (gw, node) = try Self.rig(); defer { node.cleanup(); gw.stop() }
        gw.command(["cmd": "event_answer", "handled": false, "reason": "stale_connection"])
        _ = gw.waitFor("event_answer_set")
        // Several periods answered handled:false.
        let before = gw.all("node_event").filter { $0["name"] == "node.host.stats" }.count
        #expect(waitUntil(timeout: 20) { gw.all("node_event").filter { $0["name"] == "node.host.stats" }.count >= before + 4 })
        #expect(waitUntil(timeout: 5) { node.log.contains("node.host.stats: the gateway did not use it (stale_connection); not retried") }, "\(node.log.suffix(3000))")
        let said = node.log.components(separatedBy: "the gateway did not use it (stale_connection)").count - 1
        #expect(said == 1, "\(node.log.suffix(3000))")
        // Not an error: it is not reported as a failure, and the session stays up.
        #expect(!node.log.contains("node.host.stats: not accepted"))
        #expect(gw.all("disconnect").isEmpty)
    }

    @Test func samplerReadsMeminfoAndClampsToTheBounds() {
        let m = HostStats.memory("MemTotal:       16000000 kB\nMemFree:         1000 kB\nMemAvailable:    4000000 kB\n")
        #expect(m.total == 16_000_000 * 1024 && m.free == 4_000_000 * 1024)
        #expect(HostStats.memory("MemTotal: 10 kB\nMemFree: 4 kB\n").free == 4 * 1024)  // older kernels: no MemAvailable
        #expect(HostStats.memory("garbage").total == 0)
        let s = HostStats.sample(stateDirectory: "/nonexistent/dir", meminfo: "MemTotal: 8 kB\nMemAvailable: 9 kB\n")
        #expect(s.memoryFreeBytes == s.memoryTotalBytes)  // free never over total
        #expect((1...4096).contains(s.cpuCount))
        #expect(s.diskTotalBytes != nil)  // the nearest existing ancestor's filesystem
    }
}
