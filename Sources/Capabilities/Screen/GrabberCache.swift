import Config
import Dispatch
import Glibc
import Kit
import Support

/// Keeps the most recently used grabber (its X connection and shared-memory image, or the mapped
/// framebuffer) between invokes, so a snapshot costs one capture instead of connecting, setting up
/// a segment and page-faulting it in again. An invoke checks the grabber out, so no two threads
/// ever share one; it comes back only after a successful command, is re-validated (connection
/// alive, same geometry) before reuse, and is released after `idleLifetime` unused.
final class GrabberCache: @unchecked Sendable {
    static let idleLifetime: DispatchTimeInterval = .seconds(30)

    private let lock = Lock()
    /// Guarded by `lock`. Grabbers are not thread-safe; the lock hands each to one thread at a time.
    private var idle: (screenIndex: Int, grabber: any ScreenGrabber, generation: Int)?
    private var generation = 0

    /// The cached grabber for `screenIndex` if it still matches the screen, else a new one.
    func checkout(screenIndex: Int, open: () throws(NodeError) -> any ScreenGrabber) throws(NodeError) -> any ScreenGrabber {
        let cached: (any ScreenGrabber)? = lock.withLock {
            guard let entry = idle, entry.screenIndex == screenIndex else { return nil }
            idle = nil
            return entry.grabber
        }
        if let cached, cached.isStillValid(screenIndex: screenIndex) { return cached }
        return try open()
    }

    /// Returns a grabber after a successful command; it replaces (and releases) any other idle one.
    func checkin(_ grabber: any ScreenGrabber, screenIndex: Int) {
        let (released, current): ((any ScreenGrabber)?, Int) = lock.withLock {
            generation += 1
            let old = idle?.grabber
            idle = (screenIndex, grabber, generation)
            return (old, generation)
        }
        _ = released  // released here, outside the lock (closing a Display does I/O)
        DispatchQueue.global().asyncAfter(deadline: .now() + GrabberCache.idleLifetime) { [weak self] in
            self?.expire(generation: current)
        }
    }

    /// Which grabber is idle (tests check reuse with it).
    var idleGrabberID: ObjectIdentifier? { lock.withLock { idle.map { ObjectIdentifier($0.grabber) } } }

    /// Releases the idle grabber (shutdown).
    func clear() {
        let released = lock.withLock { () -> (any ScreenGrabber)? in
            defer { idle = nil }
            return idle?.grabber
        }
        _ = released
    }

    private func expire(generation g: Int) {
        let released = lock.withLock { () -> (any ScreenGrabber)? in
            guard let entry = idle, entry.generation == g else { return nil }
            idle = nil
            return entry.grabber
        }
        _ = released
    }
}
