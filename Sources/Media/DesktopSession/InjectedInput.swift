import Glibc
import Support

/// When the node itself last sent input into the desktop session (computer.act and desktop.stream
/// through MutterRemoteDesktop). GNOME's idle time counts that input like a person's; presence
/// subtracts it. This library is loaded once per process (the computer and desktop bundles link
/// it, the core loads it for presence.mode gnome), so all of them see the same record.
public enum InjectedInput {
    private struct State {
        /// When the latest injection was sent, and when GNOME's idle monitor was seen to have it.
        var last: (sent: UInt64, registered: UInt64)?
        /// Set by the presence source: only then is each injection confirmed (a round trip or two).
        var tracking = false
    }
    private static let state = Locked(State())

    /// CLOCK_MONOTONIC milliseconds now.
    public static func nowMs() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1000 + UInt64(ts.tv_nsec) / 1_000_000
    }

    /// Whether injections need confirming (someone subtracts them from GNOME's idle time).
    public static var tracking: Bool {
        get { state.withLock { $0.tracking } }
        set { state.withLock { $0.tracking = newValue } }
    }

    static func record(sent: UInt64, registered: UInt64) { state.withLock { $0.last = (sent, registered) } }

    /// Whether activity GNOME places between `earliest` and `latest` (monotonic ms: GNOME's idle
    /// time is measured somewhere inside the call that asked for it, so the asker knows the
    /// activity's time only between "before the call" and "after it", minus the idle time; whole
    /// milliseconds, so 2 ms of slack) can be the node's latest injected event.
    public static func isOwn(activityBetween earliest: UInt64, and latest: UInt64) -> Bool {
        guard let l = state.withLock({ $0.last }) else { return false }
        return latest + 2 >= l.sent && earliest <= l.registered + 2
    }
}
