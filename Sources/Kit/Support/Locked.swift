/// A value and the lock that guards it, as one thing: the node's one way to share mutable state
/// between threads (instead of a lock next to a variable, which nothing ties together). Waiters can
/// sleep until the value satisfies a condition; `update` wakes them, so nothing polls.
public final class Locked<Value>: @unchecked Sendable {  // the guarding below is by hand: `value` only with `condition` locked
    private let condition = Condition()
    private var value: Value

    public init(_ value: Value) { self.value = value }

    /// Reads or changes the value under the lock.
    public func withLock<R, E: Error>(_ body: (inout Value) throws(E) -> R) throws(E) -> R {
        condition.lock()
        defer { condition.unlock() }
        return try body(&value)
    }

    /// Changes the value and wakes every `wait(until:)`.
    @discardableResult
    public func update<R>(_ body: (inout Value) -> R) -> R {
        condition.lock()
        defer { condition.broadcast(); condition.unlock() }
        return body(&value)
    }

    /// Sleeps until `predicate` holds for the value (checked now and after every `update`), at most
    /// `timeout` (nil: no limit). True when it holds.
    @discardableResult
    public func wait(until predicate: (Value) -> Bool, timeout: Duration? = nil) -> Bool {
        let end = timeout.map { ContinuousClock.now + $0 }
        condition.lock()
        defer { condition.unlock() }
        while !predicate(value) {
            guard let end else { condition.wait(); continue }
            let left = end - ContinuousClock.now
            if left <= .zero { return false }
            condition.wait(timeout: left)
        }
        return true
    }
}
