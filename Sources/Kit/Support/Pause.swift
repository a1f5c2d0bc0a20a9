import Glibc

/// The one way blocking code waits a moment: a pause the work's cancellation ends at once. On a
/// job thread of BlockingExecutor it waits on that job's CancelFlag (a cancelled invoke, a lost
/// gateway, shutdown), so no wait there outlives what it serves; elsewhere (a loop thread, whose
/// owner stops it by its own means) it is a plain wait. Not for polling for something that can be
/// waited on itself (a descriptor, a child's exit, a condition): those wait on the event.
public enum Pause {
    /// Waits `duration`, or less when the job on this thread is cancelled meanwhile: false when it was.
    @discardableResult
    public static func `for`(_ duration: Duration) -> Bool {
        let ms = max(0, Int(duration.components.seconds) * 1000 + Int(duration.components.attoseconds / 1_000_000_000_000_000))
        if let flag = CurrentJob.flag { return flag.sleep(milliseconds: ms) }
        var want = timespec(tv_sec: ms / 1000, tv_nsec: (ms % 1000) * 1_000_000), rest = timespec()
        // nanosleep is interrupted by signals: it says how much is left, and the rest is waited.
        while nanosleep(&want, &rest) != 0 && errno == EINTR { want = rest }
        return true
    }
}

/// The CancelFlag of the BlockingExecutor job running on this thread (nil on other threads): a
/// pthread key, set for the duration of the job's body.
enum CurrentJob {
    private static let key: pthread_key_t = {
        var k = pthread_key_t()
        pthread_key_create(&k, nil)
        return k
    }()

    /// The job's flag; the job's body holds it for as long as it is set here.
    static var flag: CancelFlag? {
        pthread_getspecific(key).map { Unmanaged<CancelFlag>.fromOpaque($0).takeUnretainedValue() }
    }

    static func running<T>(_ flag: CancelFlag, _ body: () throws -> T) rethrows -> T {
        pthread_setspecific(key, Unmanaged.passUnretained(flag).toOpaque())
        defer { pthread_setspecific(key, nil) }
        return try body()
    }
}
