import FoundationEssentials
import Glibc

/// Plain, readable log lines on stderr ("2026-11-30T10:00:00.123Z INFO  gateway: connected …").
/// stderr goes to journald under systemd; lines are written whole so a killed process loses nothing.
public struct Logger: Sendable {
    public enum Level: Int, Sendable, Comparable {
        case debug = 0, info, warn, error
        public static func < (a: Level, b: Level) -> Bool { a.rawValue < b.rawValue }
        var label: String { ["DEBUG", "INFO ", "WARN ", "ERROR"][rawValue] }
    }

    public let component: String
    public init(component: String) { self.component = component }

    /// Global threshold: OPENCLAW_NODE_LOG=debug|info|warn|error (default info).
    nonisolated(unsafe) public static var threshold: Level = {
        switch ProcessInfo.processInfo.environment["OPENCLAW_NODE_LOG"]?.lowercased() {
        case "debug": return .debug
        case "warn": return .warn
        case "error": return .error
        default: return .info
        }
    }()

    public func debug(_ msg: @autoclosure () -> String) { write(.debug, msg) }
    public func info(_ msg: @autoclosure () -> String) { write(.info, msg) }
    public func warn(_ msg: @autoclosure () -> String) { write(.warn, msg) }
    public func error(_ msg: @autoclosure () -> String) { write(.error, msg) }

    private func write(_ level: Level, _ msg: () -> String) {
        guard level >= Logger.threshold else { return }
        let line = "\(Logger.timestamp()) \(level.label) \(component): \(msg())\n"
        // One write(2) per line: whole lines even when threads log at once.
        var bytes = Array(line.utf8)
        _ = Glibc.write(2, &bytes, bytes.count)
    }

    static func timestamp() -> String {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return utcTimestamp(epochMillis: Int64(ts.tv_sec) * 1000 + Int64(ts.tv_nsec / 1_000_000))
    }
}
