import Glibc

/// One thread that fires deadlines (invoke timeouts, reply timeouts).
///
/// Why not a `Task.sleep` per deadline: in this Swift runtime a Task cancelled while suspended in
/// `Task.sleep` keeps about 750 bytes alive (measured: 5,000 cancelled sleeps → +4 MB RSS, every
/// time). The node arms a timer for every invoke and every reply it waits for and cancels almost
/// all of them, so that cost grew the daemon by ~15 MB per 20,000 invokes.
public final class DeadlineTimer: @unchecked Sendable {  // entries are touched only with `cond` locked (its own wait loop needs the bare Condition)
    public static let shared = DeadlineTimer()

    public struct Token: Sendable, Hashable { let id: UInt64 }

    private let cond = Condition()
    private var entries: [UInt64: (at: ContinuousClock.Instant, action: @Sendable () -> Void)] = [:]
    private var nextId: UInt64 = 0
    private var started = false

    public init() {}

    /// Runs `action` on the timer thread at `at` unless cancelled first. Keep actions short.
    @discardableResult
    public func schedule(at: ContinuousClock.Instant, _ action: @escaping @Sendable () -> Void) -> Token {
        cond.lock()
        nextId += 1
        let id = nextId
        entries[id] = (at, action)
        if !started {
            started = true
            BlockingExecutor.startLoop(name: "deadlines") { [unowned self] in self.loop() }
        }
        cond.signal()
        cond.unlock()
        return Token(id: id)
    }

    public func cancel(_ token: Token) {
        cond.lock()
        entries[token.id] = nil
        cond.unlock()
    }

    var pendingCount: Int { cond.lock(); defer { cond.unlock() }; return entries.count }

    private func loop() {
        cond.lock()
        while true {
            guard let (id, entry) = entries.min(by: { $0.value.at < $1.value.at }) else {
                cond.wait()
                continue
            }
            let left = entry.at - .now
            if left <= .zero {
                entries[id] = nil
                cond.unlock()
                entry.action()
                cond.lock()
            } else {
                cond.wait(timeout: min(left, .seconds(3600)))
            }
        }
    }
}
