import Glibc

/// The node's one way to run work that must block (capture, encoding, a child process, a socket
/// read loop) off Swift's cooperative pool. Every thread it starts is named (shown by `top -H`,
/// `ps -L` and in core dumps; Linux keeps the first 15 bytes).
///
/// Two entry points:
/// - `run(_:_:)` for one-shot jobs an async caller awaits. At most `jobLimit` run at once; a caller
///   beyond that suspends (asynchronously, holding no thread) until a job ends. Each job gets a
///   `CancelFlag` that Task cancellation (an invoke's deadline, `node.invoke.cancel`, a lost
///   gateway, SIGTERM) raises; the job's waits end on it.
/// - `startLoop(name:_:)` for long-lived service loops (socket readers, watchers, the timer
///   thread) that run as long as their owner. Counted, but not bounded by `jobLimit`: a loop never
///   ends by itself, so letting loops take job slots could starve the jobs.
///
/// Plain pthreads: Foundation's Thread is the only thing the daemon would need libFoundation for,
/// and a DispatchQueue would hide the names and have no bound.
public enum BlockingExecutor {
    /// How many one-shot jobs may run at once. A node serves one gateway whose invokes mostly take
    /// milliseconds; the long ones (a recording, a `system.run`, a held key) are few. 32 leaves room
    /// for every capability to have several in flight while keeping a runaway caller (a gateway
    /// sending thousands of `system.run`) from making thousands of 8 MB-stack threads; the ones
    /// beyond it wait for a slot.
    public static let jobLimit = 32

    /// Stack for one-shot jobs: encoders and capture code keep large frames on the stack.
    static let jobStackSize = 8 << 20

    /// Runs `body` on a thread of its own named `name`, once a job slot is free, and returns its
    /// result. Task cancellation raises the job's flag, and ends the wait for a slot too: a
    /// cancelled job is let in over the limit, since its raised flag ends it at once.
    public static func run<T: Sendable, E: Error>(_ name: String,
                                                  _ body: @escaping @Sendable (CancelFlag) throws(E) -> T) async throws(E) -> T {
        try await run(name, slots: .shared, body)
    }

    /// `run` with its own slots (tests use a small limit).
    static func run<T: Sendable, E: Error>(_ name: String, slots: JobSlots,
                                           _ body: @escaping @Sendable (CancelFlag) throws(E) -> T) async throws(E) -> T {
        let flag = CancelFlag()
        let ticket = slots.newTicket()
        let result: Result<T, E> = await withTaskCancellationHandler {
            await slots.acquire(ticket)
            return await withCheckedContinuation { (c: CheckedContinuation<Result<T, E>, Never>) in
                Thread.start(name: name, stackSize: jobStackSize) {
                    // The flag is the job's for Pause too, for the whole body.
                    let r = CurrentJob.running(flag) { Result { () throws(E) -> T in try body(flag) } }
                    slots.release()
                    c.resume(returning: r)
                }
            }
        } onCancel: {
            flag.cancel()
            slots.admitCancelled(ticket)
        }
        return try result.get()
    }

    /// Starts a one-shot job from synchronous code (a timer's action, a callback) without waiting
    /// for it: bounded and named like `run`, its slot awaited by a Task, never by the caller.
    public static func start(_ name: String, _ body: @escaping @Sendable () -> Void) {
        Task { await run(name) { (_: CancelFlag) in body() } }
    }

    /// Runs `body(0)` … `body(count - 1)` at the same time, `body(0)` on the calling thread and each
    /// other one on a thread of its own named `name`, and returns when all of them have returned.
    /// For spreading one CPU-bound step of a job that already runs (a PNG's deflate) over the cores,
    /// for milliseconds: not bounded by `jobLimit`, since the caller holds a slot and asks for a
    /// few threads that end by themselves. Each call of `body` must touch only its own index's state.
    public static func fanOut(_ name: String, count: Int, _ body: @escaping @Sendable (Int) -> Void) {
        guard count > 1 else {
            if count == 1 { body(0) }
            return
        }
        let running = Locked(count - 1)
        for index in 1..<count {
            Thread.start(name: name, stackSize: 0) {
                body(index)
                running.update { $0 -= 1 }
            }
        }
        body(0)
        running.wait(until: { $0 == 0 })
    }

    /// Starts a long-lived loop on a thread of its own named `name`. The loop ends when `body`
    /// returns; its owner stops it the way it stops any wait (a `Wakeup`, a closed fd, a flag).
    public static func startLoop(name: String, stackSize: Int = 0, _ body: @escaping @Sendable () -> Void) {
        loops.update { $0 += 1 }
        Thread.start(name: name, stackSize: stackSize) {
            body()
            loops.update { $0 -= 1 }
        }
    }

    /// What runs now: one-shot jobs, callers waiting for a slot, loops. For tests and `doctor`.
    public static var counts: (jobs: Int, waiting: Int, loops: Int) {
        let (jobs, waiting) = JobSlots.shared.counts
        return (jobs, waiting, loops.withLock { $0 })
    }

    /// Loops running now.
    private static let loops = Locked(0)

    /// The name the current thread was given (from /proc, so it is what `top -H` shows).
    public static var currentThreadName: String {
        let fd = open("/proc/thread-self/comm", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return "" }
        defer { close(fd) }
        var buf = [UInt8](repeating: 0, count: 32)
        let n = read(fd, &buf, buf.count)
        guard n > 0 else { return "" }
        return String(decoding: buf[0..<n].filter { $0 != 10 }, as: UTF8.self)
    }
}

/// The job slots: a count and the callers waiting, first come first served.
final class JobSlots: Sendable {
    static let shared = JobSlots(limit: BlockingExecutor.jobLimit)

    struct State {
        var running = 0
        var nextTicket: UInt64 = 0
        var queue: [(ticket: UInt64, resume: CheckedContinuation<Void, Never>)] = []
    }
    let limit: Int
    private let state = Locked(State())

    init(limit: Int) { self.limit = limit }

    /// Jobs holding a slot, callers waiting for one.
    var counts: (running: Int, waiting: Int) { state.withLock { ($0.running, $0.queue.count) } }

    /// Waits (on the condition, no polling) until `predicate` holds for the counts.
    @discardableResult
    func wait(until predicate: @escaping (_ running: Int, _ waiting: Int) -> Bool, timeout: Duration) -> Bool {
        state.wait(until: { predicate($0.running, $0.queue.count) }, timeout: timeout)
    }

    func newTicket() -> UInt64 { state.withLock { s in s.nextTicket += 1; return s.nextTicket } }

    /// Returns once the ticket holds a slot. A task already cancelled is let in at once (the
    /// cancellation handler may have run before the ticket was queued, and found nothing).
    func acquire(_ ticket: UInt64) async {
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            let now = state.update { s -> Bool in
                if (s.running < limit && s.queue.isEmpty) || Task.isCancelled {
                    s.running += 1
                    return true
                }
                s.queue.append((ticket, c))
                return false
            }
            if now { c.resume() }
        }
    }

    /// A cancelled caller still queued goes in now, over the limit.
    func admitCancelled(_ ticket: UInt64) {
        let waiter = state.update { s -> CheckedContinuation<Void, Never>? in
            guard let i = s.queue.firstIndex(where: { $0.ticket == ticket }) else { return nil }
            s.running += 1
            return s.queue.remove(at: i).resume
        }
        waiter?.resume()
    }

    /// A job ended: its slot goes to the first caller waiting, or is freed.
    func release() {
        let next = state.update { s -> CheckedContinuation<Void, Never>? in
            if s.running <= limit, !s.queue.isEmpty { return s.queue.removeFirst().resume }
            s.running -= 1
            return nil
        }
        next?.resume()
    }
}

/// Set once when the caller stops waiting: polled by capture loops between frames, and waited on
/// by `sleep(milliseconds:)`, which wakes the moment it is raised (a condition variable, not a
/// polling loop). Flags made with `either` are raised by their parents; a `Wakeup` registered with
/// `wakes(_:)` is signalled, so a poll() on its fd ends too.
public final class CancelFlag: Sendable {
    private enum Dependent {
        case flag(Weak<CancelFlag>)
        case wakeup(Weak<Wakeup>)
        var isGone: Bool {
            switch self {
            case .flag(let w): w.value == nil
            case .wakeup(let w): w.value == nil
            }
        }
        func raise() {
            switch self {
            case .flag(let w): w.value?.cancel()
            case .wakeup(let w): w.value?.signal()
            }
        }
    }
    private struct State {
        var raised = false
        /// Flags and wake-ups to raise with this one, held weakly: a long-lived flag does not
        /// keep every short one made from it.
        var dependents: [Dependent] = []
    }
    private let state = Locked(State())

    public init() {}

    public func cancel() {
        let raise: [Dependent]? = state.update { s in
            guard !s.raised else { return nil }
            s.raised = true
            defer { s.dependents = [] }
            return s.dependents
        }
        for d in raise ?? [] { d.raise() }
    }

    public var isCancelled: Bool { state.withLock { $0.raised } }

    /// Waits `milliseconds`, or less when the flag is raised meanwhile: false when it was. For
    /// holds and pauses that must end at once on cancel, disconnect or shutdown.
    public func sleep(milliseconds: Int) -> Bool {
        !state.wait(until: { $0.raised }, timeout: .milliseconds(milliseconds))
    }

    /// A flag raised when either of these is.
    public static func either(_ a: CancelFlag, _ b: CancelFlag) -> CancelFlag {
        let c = CancelFlag()
        a.add(.flag(Weak(c)))
        b.add(.flag(Weak(c)))
        return c
    }

    /// Signals `wakeup` when the flag is raised (at once when it already is), so a thread blocked
    /// in poll() on `wakeup.fd` sees the cancel without a timeout.
    /// Registering the same wake-up again (once per frame of a recording) adds nothing.
    public func wakes(_ wakeup: Wakeup) {
        let known = state.withLock { s in
            s.dependents.contains { if case .wakeup(let w) = $0 { w.value === wakeup } else { false } }
        }
        if !known { add(.wakeup(Weak(wakeup))) }
    }

    private func add(_ d: Dependent) {
        let already = state.withLock { s -> Bool in
            if !s.raised {
                s.dependents.removeAll { $0.isGone }
                s.dependents.append(d)
            }
            return s.raised
        }
        if already { d.raise() }
    }

    /// Throws `error` once the flag is raised.
    public func check<E: Error>(_ error: @autoclosure () -> E) throws(E) {
        if isCancelled { throw error() }
    }
}

private struct Weak<T: AnyObject & Sendable>: Sendable {
    weak var value: T?
    init(_ value: T) { self.value = value }
}

/// The pthread underneath; nothing outside this file starts threads.
private enum Thread {
    static func start(name: String, stackSize: Int, _ body: @escaping @Sendable () -> Void) {
        let box = Unmanaged.passRetained(ThreadStart(name: name, body: body)).toOpaque()
        var attr = pthread_attr_t()
        pthread_attr_init(&attr)
        defer { pthread_attr_destroy(&attr) }
        pthread_attr_setdetachstate(&attr, Int32(PTHREAD_CREATE_DETACHED))
        if stackSize > 0 { pthread_attr_setstacksize(&attr, stackSize) }
        var tid = pthread_t()
        let rc = pthread_create(&tid, &attr, threadMain, box)
        // Without a thread nothing the caller relies on can happen; this is resource exhaustion,
        // the same condition under which Foundation's Thread.start() traps.
        precondition(rc == 0, "cannot start thread \(name): \(String(cString: strerror(rc)))")
    }
}

private final class ThreadStart: Sendable {
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
