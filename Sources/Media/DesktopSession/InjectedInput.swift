import Glibc
import Support

/// When the node itself last sent input into the desktop session (computer.act through
/// MutterRemoteDesktop). GNOME's idle time counts that input like a person's; presence subtracts
/// it. This library is loaded once per process (the computer bundle links it, the core loads it
/// for presence.mode gnome), so both see the same record.
public enum InjectedInput {
    /// When the latest injection's call was sent and when Mutter had answered it: the event's
    /// time, as GNOME records it, lies after the first and soon after the second.
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

    /// Mutter answers the call before its compositor loop has handled the event (a frame later,
    /// more on a busy machine): activity this long after the answer is still the node's.
    static let handledWithinMs: UInt64 = 150

    /// Whether activity GNOME places at `ms` (monotonic) was the node's latest injected event.
    public static func isOwn(activityMs ms: UInt64) -> Bool {
        guard let l = last.withLock({ $0 }) else { return false }
        return ms + 1 >= l.sent && ms <= l.answered + handledWithinMs
    }
}
