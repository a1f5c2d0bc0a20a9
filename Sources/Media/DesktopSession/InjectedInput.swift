import Glibc
import Support

/// When the node itself last sent input into the desktop session (computer.act through
/// MutterRemoteDesktop). GNOME's idle time counts that input like a person's; presence subtracts
/// it. This library is loaded once per process (the computer bundle links it, the core loads it
/// for presence.mode gnome), so both see the same record.
public enum InjectedInput {
    /// When the latest injection's call was sent and when Mutter had answered it: the event's
    /// time, as GNOME records it, lies between the two (the call is handled in one go).
    private static let last = Locked<(sent: UInt64, answered: UInt64)?>(nil)

    /// CLOCK_MONOTONIC milliseconds now.
    public static func nowMs() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1000 + UInt64(ts.tv_nsec) / 1_000_000
    }

    /// Sends one injected event through `send`, noting when.
    @discardableResult
    static func record<T, E: Error>(_ send: () throws(E) -> T) throws(E) -> T {
        let sent = nowMs()
        let result = try send()
        let answered = nowMs()
        last.withLock { $0 = (sent, answered) }
        return result
    }

    /// Whether activity GNOME places at `ms` (monotonic) was the node's latest injected event (a
    /// millisecond of rounding either side).
    public static func isOwn(activityMs ms: UInt64) -> Bool {
        guard let l = last.withLock({ $0 }) else { return false }
        return ms + 1 >= l.sent && ms <= l.answered + 1
    }
}
