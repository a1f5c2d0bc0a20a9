import Glibc

/// Plain, readable log lines on stderr ("2026-11-30T10:00:00.123Z INFO  gateway: connected …").
/// stderr goes to journald under systemd, where each line carries its syslog priority instead of
/// the timestamp; lines are written whole so a killed process loses nothing.
public struct Logger: Sendable {
    public enum Level: Int, Sendable, Comparable {
        case debug = 0, info, warn, error
        public static func < (a: Level, b: Level) -> Bool { a.rawValue < b.rawValue }
        var label: String { ["DEBUG", "INFO ", "WARN ", "ERROR"][rawValue] }
        /// syslog priority, as journald reads it from a `<N>` line prefix.
        var syslogPriority: Int { [7, 6, 4, 3][rawValue] }
    }

    public let component: String
    public init(component: String) { self.component = component }

    /// Global threshold: OPENCLAW_NODE_LOG=debug|info|warn|error (default info), read once.
    public static let threshold: Level = {
        switch ProcessEnvironment.current["OPENCLAW_NODE_LOG"]?.lowercased() {
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
        let text = Logger.format(level, component: component, message: msg(), journal: Logger.toJournal)
        // One write(2) per message: whole lines even when threads log at once. A stderr that a
        // child made non-blocking (a shared journal socket) is waited for, not dropped; a reader
        // stuck for 2 s loses the line instead of stopping the thread that logs.
        try? SystemIO.live.writeAll(2, Array(text.utf8), timeoutMs: 2000)
    }

    /// A message as written. For the journal every line carries the priority (journald takes each
    /// line as an entry) and no timestamp (journald keeps its own); elsewhere a timestamp and level.
    static func format(_ level: Level, component: String, message: String, journal: Bool) -> String {
        guard journal else { return "\(timestamp()) \(level.label) \(component): \(message)\n" }
        return message.split(separator: "\n", omittingEmptySubsequences: false)
            .map { "<\(level.syslogPriority)>\(component): \($0)\n" }.joined()
    }

    /// Whether stderr is systemd's journal stream: `JOURNAL_STREAM` ("device:inode") names the
    /// stream systemd connected, and stderr is still it (not redirected by a wrapper).
    static let toJournal: Bool = {
        guard let v = ProcessEnvironment.value("JOURNAL_STREAM") else { return false }
        let parts = v.split(separator: ":")
        guard parts.count == 2, let dev = UInt64(parts[0]), let ino = UInt64(parts[1]) else { return false }
        var st = stat()
        guard fstat(2, &st) == 0 else { return false }
        return UInt64(st.st_dev) == dev && UInt64(st.st_ino) == ino
    }()

    static func timestamp() -> String {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return utcTimestamp(epochMillis: Int64(ts.tv_sec) * 1000 + Int64(ts.tv_nsec / 1_000_000))
    }
}
