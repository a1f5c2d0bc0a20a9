import Config
import Kit
import Support

/// The metrics outputs the config asks for (`metrics.listen`, `metrics.textfile`), started
/// together and stopped together with the daemon.
public struct MetricsService: Sendable {
    let endpoint: MetricsEndpoint?
    let textfile: MetricsTextfile?

    /// Starts what `config` names; an output that cannot start is logged with why and left out
    /// (the node itself runs on: metrics are not worth refusing service for).
    public static func start(_ config: NodeConfig.Metrics, metrics: NodeMetrics, log: Logger) -> MetricsService {
        var endpoint: MetricsEndpoint?
        if let listen = config.listen {
            switch LocalServerAddress.parse(listen, server: "the metrics endpoint").flatMap({ MetricsEndpoint.open($0, metrics: metrics, log: log) }) {
            case .success(let e): e.start(); endpoint = e
            case .failure(let why): log.error("metrics.listen \(listen): \(why); no metrics endpoint")
            }
        }
        let textfile = config.textfile.map { MetricsTextfile(path: $0, interval: .seconds(config.textfileInterval), metrics: metrics, log: log) }
        textfile?.start()
        return MetricsService(endpoint: endpoint, textfile: textfile)
    }

    public func stop() {
        endpoint?.stop()
        textfile?.stop()
    }
}
