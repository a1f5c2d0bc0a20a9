import Glibc

/// A mutex, the part under `Locked` (and `Condition`). Internal to Support: outside it, shared
/// state is a `Locked` value, so no code can pair a lock with a variable it does not enclose.
/// The daemon does not link Foundation (its Lock costs the whole of libFoundation and ICU at
/// start-up). A class, so it is never moved while locked.
final class Lock: @unchecked Sendable {  // a pthread_mutex_t pointer, used only through its own calls
    fileprivate let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)

    init() { pthread_mutex_init(mutex, nil) }
    deinit { pthread_mutex_destroy(mutex); mutex.deallocate() }

    func lock() { pthread_mutex_lock(mutex) }
    func unlock() { pthread_mutex_unlock(mutex) }

    @discardableResult
    func withLock<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        lock(); defer { unlock() }
        return try body()
    }
}

/// A condition variable with its own lock (NSCondition's shape). Timed waits use CLOCK_MONOTONIC,
/// so a wall-clock jump (NTP at boot) neither fires nor delays them. Internal to Support, like Lock.
final class Condition: @unchecked Sendable {  // a pthread_cond_t pointer, used only under its lock
    private let mutex = Lock()
    private let cond = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    init() {
        var attr = pthread_condattr_t()
        pthread_condattr_init(&attr)
        pthread_condattr_setclock(&attr, CLOCK_MONOTONIC)
        pthread_cond_init(cond, &attr)
        pthread_condattr_destroy(&attr)
    }
    deinit { pthread_cond_destroy(cond); cond.deallocate() }

    func lock() { mutex.lock() }
    func unlock() { mutex.unlock() }
    func signal() { pthread_cond_signal(cond) }
    func broadcast() { pthread_cond_broadcast(cond) }
    /// Call with the lock held.
    func wait() { pthread_cond_wait(cond, mutex.mutex) }

    /// Waits at most `timeout` (lock held); false when the time ran out.
    @discardableResult
    func wait(timeout: Duration) -> Bool {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        let c = max(timeout, .zero).components
        var sec = ts.tv_sec + Int(c.seconds)
        var nsec = ts.tv_nsec + Int(c.attoseconds / 1_000_000_000)
        if nsec >= 1_000_000_000 { sec += 1; nsec -= 1_000_000_000 }
        ts.tv_sec = sec; ts.tv_nsec = nsec
        return pthread_cond_timedwait(cond, mutex.mutex, &ts) == 0
    }
}
