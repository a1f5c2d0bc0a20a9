import Glibc
import Kit
import Support

/// Why the keep-awake lock could not be taken.
public struct InhibitFailure: Error, Sendable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// The node's one keep-awake inhibitor: logind's `idle:sleep` lock in `block` mode, taken when the
/// first hold is (a canvas shown, a desktop stream, a talk conversation, presence.keepAwake) and
/// ended — its descriptor closed — when the last is released. logind ties the lock to that
/// descriptor, not to a bus connection, so the bus is opened only for the call; and a daemon that
/// dies takes its lock with it. The D-Bus call runs on a job of its own, never on the caller's
/// thread: a hold is taken at once, the lock follows.
public final class KeepAwakeKeeper: KeepAwake {
    private struct State {
        var holds: [Int: String] = [:]
        var next = 0
        /// The lock's descriptor while held.
        var lock: Int32?
        /// Why the lock could not be taken (said once per failure in the log, always in status).
        var failure: String?
    }

    public static let shared = KeepAwakeKeeper()

    private let state = Locked(State())
    /// One reconcile at a time, so two jobs never both take a lock.
    private let reconciling = Locked(())
    private let take: @Sendable (String) -> Result<Int32, InhibitFailure>
    private let log = Logger(component: "keep-awake")

    /// `take`: makes the lock for a reason (logind by default; tests give their own).
    public init(take: @escaping @Sendable (String) -> Result<Int32, InhibitFailure> = KeepAwakeKeeper.logindLock) {
        self.take = take
    }

    public func hold(_ reason: String) -> KeepAwakeHold {
        let id = state.withLock { s -> Int in
            s.next += 1
            s.holds[s.next] = reason
            return s.next
        }
        log.info("holding the device awake: \(reason)")
        BlockingExecutor.start("keep-awake") { self.reconcile() }
        return KeepAwakeHold { [self] in
            _ = state.withLock { $0.holds.removeValue(forKey: id) }
            log.info("no longer needed awake for: \(reason)")
            BlockingExecutor.start("keep-awake") { self.reconcile() }
        }
    }

    /// For `status`: whether the lock is held and for what.
    public var status: (held: Bool, reasons: [String], failure: String?) {
        state.withLock { s in (s.lock != nil, s.holds.keys.sorted().map { s.holds[$0]! }, s.failure) }
    }

    /// Takes the lock when holds exist and none is held; ends it when none exist.
    func reconcile() {
        reconciling.withLock { _ in
            let (reasons, lock) = state.withLock { s in (s.holds.keys.sorted().map { s.holds[$0]! }, s.lock) }
            if !reasons.isEmpty, lock == nil {
                switch take(reasons.joined(separator: "; ")) {
                case .success(let fd):
                    state.withLock { $0.lock = fd; $0.failure = nil }
                    log.info("took logind's idle and sleep lock")
                case .failure(let failure):
                    let why = failure.description
                    let first = state.withLock { s -> Bool in defer { s.failure = why }; return s.failure != why }
                    if first { log.warn("cannot keep the device awake: \(why)") }
                }
            } else if reasons.isEmpty, let fd = lock {
                close(fd)
                state.withLock { $0.lock = nil }
                log.info("released logind's idle and sleep lock")
            }
        }
    }

    /// logind's Inhibit on the system bus (DBUS_SYSTEM_BUS_ADDRESS when set, as sd-bus reads it).
    @Sendable public static func logindLock(_ why: String) -> Result<Int32, InhibitFailure> {
        let lib: SystemdLibrary
        switch SystemdLibrary.shared {
        case .success(let l): lib = l
        case .failure(let f): return .failure(InhibitFailure(f.description))
        }
        var bus: SystemdLibrary.Bus?
        let r = lib.busOpenSystem(&bus)
        guard r >= 0, let bus else { return .failure(InhibitFailure("no system bus: \(String(cString: strerror(-r)))")) }
        defer { _ = lib.busFlushCloseUnref(bus) }
        return lib.inhibit(bus, what: "idle:sleep", who: "openclaw-node", why: String(why.prefix(200)), mode: "block")
            .mapError { InhibitFailure("logind refused the idle and sleep lock (\($0))") }
    }
}
