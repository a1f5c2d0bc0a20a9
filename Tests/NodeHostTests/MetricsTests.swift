@testable import Config
import Foundation
import Kit
@testable import Metrics
@testable import Registry
@testable import Support
@testable import TestSupport
import Testing

/// The metrics endpoint of a real daemon, scraped by Debian's real Prometheus server on loopback:
/// the target is up, the series parse (`promtool check metrics` is clean), counters move with
/// invokes sent by the test gateway, the textfile mode writes the same text and removes it when
/// the node stops; an address that is not loopback is refused while the node runs on; a Unix
/// socket is 0600.
@Suite(.serialized) struct MetricsTests {
    @Test func prometheusScrapesTheNodeAndCountersMoveWithInvokes() throws {
        let gw = try TestGateway(stateFile: TestPaths.tempDir("gw") + "/gw.json", args: ["--auto-approve"]); defer { gw.stop() }
        let port = try freeLoopbackPort()
        let collectorDir = TestPaths.tempDir("textfile-collector"); defer { try? FileManager.default.removeItem(atPath: collectorDir) }
        let textfile = collectorDir + "/openclaw-node.prom"
        let n = NodeUnderTest(gatewayURL: gw.url, extra: "metrics: { listen: '127.0.0.1:\(port)', textfile: '\(textfile)', textfileIntervalSeconds: 1 }")
        defer { n.cleanup() }
        try n.start()
        _ = try #require(gw.waitFor("hello"), "\(n.log)")
        #expect(waitUntil(timeout: 10) { n.log.contains("serving metrics on http 127.0.0.1:\(port)/metrics") }, "\(n.log)")

        for _ in 0..<3 { #expect(gw.invoke("device.info")?["ok"] == true) }
        // A command the node does not have: answered with an error, and counted as "other" (a
        // peer's made-up names do not become series).
        let refused = try #require(gw.invoke("made.up.\(UUID().uuidString)"))
        let refusedCode = try #require(refused["error"]?["code"]?.stringValue, "\(refused)")

        // The last update check (openclaw-node update writes it to the state directory).
        try #"{"atMs": 1796000000000, "result": "up to date (openclaw-node 0.2.0+deb12)"}"#
            .write(toFile: n.dir + "/state/update-check.json", atomically: true, encoding: .utf8)
        let scrape = try httpGet(port: port, path: "/metrics")
        #expect(scrape.status == 200 && scrape.headers["content-type"] == "text/plain; version=0.0.4; charset=utf-8", "\(scrape.headers)")
        let text = scrape.body
        #expect(text.contains("openclaw_node_gateway_connected 1\n"), "\(text)")
        #expect(text.contains("openclaw_node_gateway_connects_total 1\n"))
        #expect(text.contains("openclaw_node_gateway_state{state=\"connected\"} 1\n"))
        #expect(text.contains("openclaw_node_invokes_total{command=\"device.info\",outcome=\"ok\"} 3\n"), "\(text)")
        #expect(text.contains("openclaw_node_invokes_total{command=\"other\",outcome=\"\(refusedCode)\"} 1\n"), "\(text)")
        #expect(!text.contains("made.up"))
        #expect(text.contains("openclaw_node_invoke_duration_seconds_count{command=\"device.info\"} 3\n"))
        #expect(text.contains("openclaw_node_invoke_duration_seconds_bucket{command=\"device.info\",le=\"+Inf\"} 3\n"))
        #expect(text.contains("openclaw_node_capability_available{capability=\"device\"} 1\n"))
        #expect(text.contains("openclaw_node_presence_foreground "))
        #expect(text.contains("process_resident_memory_bytes ") && text.contains("process_open_fds "))
        #expect(text.contains("openclaw_node_update_last_check_timestamp_seconds 1796000000\n") && text.contains("openclaw_node_update_last_check_success 1\n"), "\(text)")
        // Prometheus's own checker: the format parses and the names follow its conventions.
        let check = try runProcess("/bin/sh", ["-c", "promtool check metrics"], stdin: text)
        #expect(check.code == 0 && check.stdout.isEmpty && check.stderr.isEmpty, "\(check.stdout)\(check.stderr)")
        // The method and path: anything but GET/HEAD /metrics is refused.
        #expect(try httpGet(port: port, path: "/").status == 404)

        // The real server scrapes it every second.
        let prom = try PrometheusServer(targets: ["127.0.0.1:\(port)"]); defer { prom.stop() }
        #expect(waitUntil(timeout: 20) { prom.targets().first?.health == "up" }, "\(prom.targets()) \(prom.log)")
        let okSeries = "openclaw_node_invokes_total{command=\"device.info\",outcome=\"ok\"}"
        #expect(waitUntil(timeout: 20) { prom.query(okSeries) == 3 }, "\(String(describing: prom.query(okSeries)))")
        for _ in 0..<2 { _ = gw.invoke("device.info") }
        #expect(waitUntil(timeout: 20) { prom.query(okSeries) == 5 }, "\(String(describing: prom.query(okSeries)))")
        #expect(prom.query("openclaw_node_gateway_connected") == 1)
        #expect((prom.query("process_resident_memory_bytes{job=\"openclaw-node\"}") ?? 0) > 1_000_000)

        // The textfile: the same families, readable by the collector, gone when the node stops.
        #expect(waitUntil(timeout: 10) { (try? String(contentsOfFile: textfile, encoding: .utf8))?.contains("outcome=\"ok\"} 5") == true })
        let mode = (try FileManager.default.attributesOfItem(atPath: textfile)[.posixPermissions] as? Int) ?? 0
        #expect(mode == 0o644, "mode \(String(mode, radix: 8))")
        #expect(n.stop() == 0)
        #expect(!FileManager.default.fileExists(atPath: textfile))
        #expect((try? httpGet(port: port, path: "/metrics")) == nil, "the endpoint outlived the node")
        #expect(gw.schemaErrors.isEmpty)
    }

    @Test func aLANAddressIsRefusedAndAUnixSocketIsPrivate() throws {
        let port = try freeLoopbackPort()
        let lan = NodeUnderTest(gatewayURL: "ws://127.0.0.1:9", extra: "metrics: { listen: '0.0.0.0:\(port)' }"); defer { lan.cleanup() }
        try lan.start()
        #expect(waitUntil(timeout: 10) { lan.log.contains("metrics.listen 0.0.0.0:\(port): 0.0.0.0 is not a loopback address") }, "\(lan.log)")
        #expect((try? httpGet(port: port, path: "/metrics")) == nil)
        #expect(lan.isRunning)
        #expect(lan.stop() == 0)

        let dir = TestPaths.tempDir("metrics-sock"); defer { try? FileManager.default.removeItem(atPath: dir) }
        let sock = dir + "/metrics.sock"
        let n = NodeUnderTest(gatewayURL: "ws://127.0.0.1:9", extra: "metrics: { listen: 'unix:\(sock)' }"); defer { n.cleanup() }
        try n.start()
        #expect(waitUntil(timeout: 10) { FileManager.default.fileExists(atPath: sock) }, "\(n.log)")
        let mode = (try FileManager.default.attributesOfItem(atPath: sock)[.posixPermissions] as? Int) ?? 0
        #expect(mode == 0o600, "mode \(String(mode, radix: 8))")
        let r = try httpGet(unixSocket: sock, urlPath: "/metrics")
        #expect(r.status == 200 && r.body.contains("openclaw_node_gateway_connected 0\n"), "\(r.body.prefix(300))")
        #expect(n.stop() == 0)
        #expect(!FileManager.default.fileExists(atPath: sock))
    }

    @Test func exposition() {
        let text = MetricsText.render([
            MetricFamily("x_total", .counter, "a \\ help\nline", [.init([("l", "a\"b\\c\nd")], 2)]),
            MetricFamily("y", .gauge, "y", [.init([], 0.25), .init([("k", "v")], .infinity)]),
        ])
        #expect(text == """
            # HELP x_total a \\\\ help\\nline
            # TYPE x_total counter
            x_total{l="a\\"b\\\\c\\nd"} 2
            # HELP y y
            # TYPE y gauge
            y 0.25
            y{k="v"} +Inf

            """)
        #expect(NodeMetrics.isValidName("mcp_servers") && NodeMetrics.isValidName("_a:b1"))
        #expect(!NodeMetrics.isValidName("1abc") && !NodeMetrics.isValidName("a-b") && !NodeMetrics.isValidName("") && !NodeMetrics.isValidName("é"))
    }

    @Test func durationsAreCumulativeBuckets() {
        let stats = InvokeStats()
        stats.record(command: "a", outcome: "ok", seconds: 0.003)
        stats.record(command: "a", outcome: "TIMEOUT", seconds: 0.2)
        stats.record(command: "a", outcome: "ok", seconds: 500)
        let d = stats.snapshot.durations["a"]!
        #expect(d.count == 3 && abs(d.sum - 500.203) < 1e-9)
        #expect(d.buckets[0] == 1)                                                  // ≤ 5 ms
        #expect(d.buckets[InvokeStats.bucketBounds.firstIndex(of: 0.25)!] == 2)      // ≤ 250 ms
        #expect(d.buckets.last == 2)                                                // 500 s is only in +Inf
        #expect(stats.snapshot.outcomes["a"] == ["ok": 2, "TIMEOUT": 1])
    }
}
