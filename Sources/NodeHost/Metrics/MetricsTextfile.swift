import Glibc
import Kit
import Support

/// The textfile-collector mode: the same exposition text written to a file every `interval`, for
/// node_exporter's `--collector.textfile.directory` (where nothing may listen, or one exporter
/// already serves the machine). Written to a temporary file in the same folder and renamed over
/// the target, so the collector never reads half a file; removed when the node stops, so a
/// stopped node's numbers do not look current.
public final class MetricsTextfile: Sendable {
    public let path: String
    private let interval: Duration
    private let metrics: NodeMetrics
    private let log: Logger
    private let task = Locked<Task<Void, Never>?>(nil)

    public init(path: String, interval: Duration, metrics: NodeMetrics, log: Logger) {
        self.path = path; self.interval = interval; self.metrics = metrics; self.log = log
    }

    public func start() {
        log.info("writing metrics to \(path) every \(interval)")
        let t = Task { [self] in
            var failedBefore = false
            while !Task.isCancelled {
                do throws(FileSystem.Failure) {
                    try FileSystem.write(Array(await metrics.text().utf8), to: path, mode: 0o644, atomically: true)
                    failedBefore = false
                } catch {
                    // Said once, not every interval, until it works again.
                    if !failedBefore { log.warn("cannot write the metrics file \(path): \(error.reason)") }
                    failedBefore = true
                }
                try? await Task.sleep(for: interval)
            }
        }
        task.withLock { $0 = t }
    }

    public func stop() {
        task.withLock { $0?.cancel(); $0 = nil }
        unlink(path)
    }
}
