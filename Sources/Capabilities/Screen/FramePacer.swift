import Glibc

/// Paces a recording on the monotonic clock: frame slots every 1/fps s from the start; a slot
/// is captured when it is due, and slots that passed while the previous frame was still being
/// encoded are skipped (the clip keeps real-time length with fewer frames, not a slow-motion one).
struct FramePacer {
    let fps: Int
    let durationMs: Int
    /// Number of slots: ⌈duration × fps⌉, at least one.
    let slots: Int
    /// CLOCK_MONOTONIC time of timestamp 0 (the microphone's chunks are placed against it).
    let startNs: UInt64

    init(fps: Int, durationMs: Int, startNs: UInt64 = FramePacer.nowNs()) {
        self.fps = fps
        self.durationMs = durationMs
        self.slots = max(1, (durationMs * fps + 999) / 1000)
        self.startNs = startNs
    }

    /// Presentation time of a slot in the clip.
    func timestampMs(_ slot: Int) -> Int64 { Int64(slot) * 1000 / Int64(fps) }

    func dueNs(_ slot: Int) -> UInt64 { startNs + UInt64(slot) * 1_000_000_000 / UInt64(fps) }

    /// The slot to capture after `slot` when the clock reads `nowNs`; nil when `slot` was the last.
    func next(after slot: Int, nowNs: UInt64 = FramePacer.nowNs()) -> Int? {
        guard slot < slots - 1 else { return nil }
        let elapsed = nowNs > startNs ? nowNs - startNs : 0
        let latestDue = Int(elapsed * UInt64(fps) / 1_000_000_000)
        return min(slots - 1, max(slot + 1, latestDue))
    }

    /// Sleeps until `slot` is due (absolute deadline, so sleeps do not accumulate drift).
    func wait(for slot: Int) {
        let due = dueNs(slot)
        var ts = timespec(tv_sec: Int(due / 1_000_000_000), tv_nsec: Int(due % 1_000_000_000))
        while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nil) == EINTR {}
    }

    static func nowNs() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }
}
