import Glibc

/// A named OS thread for blocking work (socket reads, device capture, poll loops) that must never
/// hold a thread of Swift's cooperative pool. Plain pthreads: Foundation's Thread is the only thing
/// the daemon would need libFoundation for.
public enum DetachedThread {
    /// Starts `body` on a new detached thread named `name` (shown by `top -H` and in core dumps;
    /// Linux keeps the first 15 bytes). Stack size 0 means the system default.
    public static func start(name: String, stackSize: Int = 0, _ body: @escaping @Sendable () -> Void) {
        let box = Unmanaged.passRetained(ThreadStart(name: name, body: body)).toOpaque()
        let rc = spawn(box, stackSize: stackSize)
        // Without a thread nothing the caller relies on can happen; this is resource exhaustion,
        // the same condition under which Foundation's Thread.start() traps.
        precondition(rc == 0, "cannot start thread \(name): \(String(cString: strerror(rc)))")
    }

    private static func spawn(_ box: UnsafeMutableRawPointer, stackSize: Int) -> Int32 {
        var attr = pthread_attr_t()
        pthread_attr_init(&attr)
        defer { pthread_attr_destroy(&attr) }
        pthread_attr_setdetachstate(&attr, Int32(PTHREAD_CREATE_DETACHED))
        if stackSize > 0 { pthread_attr_setstacksize(&attr, stackSize) }
        var tid = pthread_t()
        return pthread_create(&tid, &attr, threadMain, box)
    }
}

private final class ThreadStart: @unchecked Sendable {
    let name: String
    let body: @Sendable () -> Void
    init(name: String, body: @escaping @Sendable () -> Void) { self.name = name; self.body = body }
}

private func threadMain(_ arg: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? {
    let start = Unmanaged<ThreadStart>.fromOpaque(arg!).takeRetainedValue()
    nameThisThread(start.name)
    start.body()
    return nil
}

/// pthread_setname_np is hidden behind _GNU_SOURCE; the kernel's own file for it is not.
private func nameThisThread(_ name: String) {
    let fd = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
    guard fd >= 0 else { return }
    var bytes = Array(name.utf8.prefix(15))
    _ = write(fd, &bytes, bytes.count)
    close(fd)
}
