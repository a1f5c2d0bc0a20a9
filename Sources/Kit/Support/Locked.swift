/// A value and the lock that guards it, as one thing: the node's one way to share mutable state
/// between threads (instead of a lock next to a variable, which nothing ties together). Waiters can
/// sleep until the value satisfies a condition; `update` wakes them, so nothing polls.
public final class Locked<Value> {
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

/// Shared between threads only when what it guards may be: a lock makes access exclusive, not a
/// non-Sendable value (a class others still hold) safe to hand across. The guarding is by hand
/// (`value` only with `condition` locked), hence unchecked.
extension Locked: @unchecked Sendable where Value: Sendable {}

/// A value that is not Sendable (a C library's handle, a decoder object) and that only the Locked
/// holding it ever touches: it is handed over when made and kept nowhere else, so the lock is what
/// makes sharing it between threads safe. Saying so at the one place it is made keeps the rule
/// above honest everywhere else.
public struct Confined<Value>: @unchecked Sendable {
    public var value: Value
    public init(_ value: Value) { self.value = value }
}

extension Locked {
    /// Makes a Locked of a value only it will ever touch (see Confined).
    public convenience init<V>(confining value: V) where Value == Confined<V> { self.init(Confined(value)) }

    /// `withLock` for a confined value: the body is given the value itself.
    public func withConfined<V, R, E: Error>(_ body: (inout V) throws(E) -> R) throws(E) -> R where Value == Confined<V> {
        try withLock { (c: inout Confined<V>) throws(E) -> R in try body(&c.value) }
    }
}
