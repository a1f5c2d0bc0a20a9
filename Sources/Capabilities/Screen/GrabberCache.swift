import Config
import Glibc
import Kit
import Support

/// Keeps the most recently used grabber (its X connection and shared-memory image, or the mapped
/// framebuffer) between invokes, so a snapshot costs one capture instead of connecting, setting up
/// a segment and page-faulting it in again. An invoke checks the grabber out, so no two threads
/// ever share one; it comes back only after a successful command, is re-validated (connection
/// alive, same geometry) before reuse, and is released after `idleLifetime` unused.
final class GrabberCache: Sendable {
    static let idleLifetime: Duration = .seconds(30)

    /// Grabbers are not thread-safe; the lock hands each to one thread at a time. Unchecked: an idle
    /// grabber is held only here and handed whole to the one invoke that checks it out.
    private struct State: @unchecked Sendable {
        var idle: (screenIndex: Int, grabber: any ScreenGrabber, generation: Int)?
        var generation = 0
    }
    private let state = Locked(State())

    /// The cached grabber for `screenIndex` if it still matches the screen, else a new one.
    func checkout(screenIndex: Int, open: () throws(NodeError) -> any ScreenGrabber) throws(NodeError) -> any ScreenGrabber {
        let cached: (any ScreenGrabber)? = state.withLock { s in
            guard let entry = s.idle, entry.screenIndex == screenIndex else { return nil }
            s.idle = nil
            return entry.grabber
        }
        if let cached, cached.isStillValid(screenIndex: screenIndex) { return cached }
        return try open()
    }

    /// Returns a grabber after a successful command; it replaces (and releases) any other idle one.
    func checkin(_ grabber: any ScreenGrabber, screenIndex: Int) {
        let (released, current): ((any ScreenGrabber)?, Int) = state.withLock { s in
            s.generation += 1
            let old = s.idle?.grabber
            s.idle = (screenIndex, grabber, s.generation)
            return (old, s.generation)
        }
        _ = released  // released here, outside the lock (closing a Display does I/O)
        // The timer thread only hands the release (X or framebuffer I/O) to a job.
        DeadlineTimer.shared.schedule(at: .now + GrabberCache.idleLifetime) { [weak self] in
            guard let self else { return }
            BlockingExecutor.start("grabber-release") { self.expire(generation: current) }
        }
    }

    /// Which grabber is idle (tests check reuse with it).
    var idleGrabberID: ObjectIdentifier? { state.withLock { $0.idle.map { ObjectIdentifier($0.grabber) } } }

    /// Releases the idle grabber (shutdown).
    func clear() {
        let released = state.withLock { s -> (any ScreenGrabber)? in
            defer { s.idle = nil }
            return s.idle?.grabber
        }
        _ = released
    }

    private func expire(generation g: Int) {
        let released = state.withLock { s -> (any ScreenGrabber)? in
            guard let entry = s.idle, entry.generation == g else { return nil }
            s.idle = nil
            return entry.grabber
        }
        _ = released
    }
}
