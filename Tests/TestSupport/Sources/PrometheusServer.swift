import Foundation

/// Debian's real Prometheus server (the `prometheus` package), on a free loopback port with its
/// own config and storage in a private folder, scraping the given targets every second. Stopped
/// by its PID and its folder removed by `stop()`.
final class PrometheusServer: @unchecked Sendable {
    static let binary = "/usr/bin/prometheus"
    let dir: String
    let port: Int
    private var process: BackgroundProcess?

    /// `targets`: HOST:PORT of each /metrics endpoint (job "openclaw-node").
    init(targets: [String]) throws {
        guard FileManager.default.isExecutableFile(atPath: Self.binary) else { throw TestFailure("\(Self.binary) is missing: run scripts/setup") }
        dir = TestPaths.tempDir("prometheus")
        let config = """
            global: { scrape_interval: 1s, scrape_timeout: 1s, evaluation_interval: 1s }
            scrape_configs:
              - job_name: openclaw-node
                static_configs: [ { targets: [\(targets.map { "'\($0)'" }.joined(separator: ", "))] } ]
            """
        try config.write(toFile: dir + "/prometheus.yml", atomically: true, encoding: .utf8)
        var last: Error?
        // The port is free when chosen; another process may take it before Prometheus binds it.
        for _ in 0..<3 {
            let p = try freeLoopbackPort()
            do {
                let proc = try BackgroundProcess(Self.binary, [
                    "--config.file=\(dir)/prometheus.yml", "--storage.tsdb.path=\(dir)/data",
                    "--web.listen-address=127.0.0.1:\(p)", "--log.level=warn",
                ], env: ["PATH": "/usr/bin:/bin", "HOME": dir])
                if waitUntil(timeout: 30, { (try? httpGet(port: p, path: "/-/ready").status) == 200 }) {
                    process = proc; port = p
                    return
                }
                last = TestFailure("prometheus did not become ready: \(proc.log.suffix(2000))")
                _ = proc.stop()
            } catch { last = error }
        }
        try? FileManager.default.removeItem(atPath: dir)
        throw last ?? TestFailure("prometheus did not start")
    }

    /// The value of an instant query's first sample (nil: no sample yet).
    func query(_ promql: String) -> Double? {
        let q = promql.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? promql
        guard let r = try? httpGet(port: port, path: "/api/v1/query?query=\(q)"), r.status == 200,
              let json = try? JSONSerialization.jsonObject(with: Data(r.body.utf8)) as? [String: Any],
              let data = json["data"] as? [String: Any], let result = data["result"] as? [[String: Any]],
              let value = result.first?["value"] as? [Any], value.count == 2, let text = value[1] as? String else { return nil }
        return Double(text)
    }

    /// Each active target's health ("up", "down", "unknown") and last error.
    func targets() -> [(health: String, error: String)] {
        guard let r = try? httpGet(port: port, path: "/api/v1/targets"), r.status == 200,
              let json = try? JSONSerialization.jsonObject(with: Data(r.body.utf8)) as? [String: Any],
              let data = json["data"] as? [String: Any], let active = data["activeTargets"] as? [[String: Any]] else { return [] }
        return active.map { (($0["health"] as? String) ?? "", ($0["lastError"] as? String) ?? "") }
    }

    var log: String { process?.log ?? "" }

    func stop() {
        _ = process?.stop()
        process = nil
        try? FileManager.default.removeItem(atPath: dir)
    }
}
