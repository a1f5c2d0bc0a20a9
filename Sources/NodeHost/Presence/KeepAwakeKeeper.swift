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
/// dies takes its lock with it. In a desktop session (a session bus) the desktop portal's idle
/// inhibitor is taken beside it (PortalInhibition): GNOME and KDE blank their screens by their own
/// session's inhibitors. The D-Bus calls run on a job of their own, never on the caller's thread:
/// a hold is taken at once, the locks follow.
public final class KeepAwakeKeeper: KeepAwake {
    private struct State {
        var holds: [Int: String] = [:]
        var next = 0
        /// The lock's descriptor while held.
        var lock: Int32?
        /// The desktop portal's inhibitor while held.
        var desktop: PortalInhibition?
        /// Why the portal gave none (said once per failure in the log).
        var desktopFailure: String?
        /// Why the lock could not be taken (said once per failure in the log, always in status).
        var failure: String?
    }

    public static let shared = KeepAwakeKeeper()

    private let state = Locked(State())
    /// One reconcile at a time, so two jobs never both take a lock.
    private let reconciling = Locked(())
    private let take: @Sendable (String) -> Result<Int32, InhibitFailure>
    private let takeDesktop: @Sendable (String) -> Result<PortalInhibition, InhibitFailure>?
    private let log = Logger(component: "keep-awake")

    /// `take`: makes the lock for a reason (logind by default; tests give their own). `desktop`:
    /// the desktop session's inhibitor, nil where there is no session bus.
    init(take: @escaping @Sendable (String) -> Result<Int32, InhibitFailure> = KeepAwakeKeeper.logindLock,
         desktop: @escaping @Sendable (String) -> Result<PortalInhibition, InhibitFailure>? = PortalInhibition.take) {
        self.take = take
        self.takeDesktop = desktop
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

    /// For `status`: whether the desktop portal's idle inhibitor is held too.
    public var holdsDesktopInhibitor: Bool { state.withLock { $0.desktop != nil } }

    /// Takes the lock when holds exist and none is held; ends it when none exist.
    func reconcile() {
        reconciling.withLock { _ in
            let (reasons, lock) = state.withLock { s in (s.holds.keys.sorted().map { s.holds[$0]! }, s.lock) }
            reconcileDesktop(reasons)
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

    /// The desktop's inhibitor follows the holds as logind's lock does; where there is no session
    /// bus nothing is asked.
    private func reconcileDesktop(_ reasons: [String]) {
        let held = state.withLock { $0.desktop }
        if !reasons.isEmpty, held == nil {
            switch takeDesktop(reasons.joined(separator: "; ")) {
            case nil: break
            case .success(let inhibition)?:
                state.withLock { $0.desktop = inhibition; $0.desktopFailure = nil }
                log.info("took the desktop portal's idle inhibitor")
            case .failure(let failure)?:
                let why = failure.description
                let first = state.withLock { s -> Bool in defer { s.desktopFailure = why }; return s.desktopFailure != why }
                if first { log.info("\(why); the desktop session may still blank its screen") }
            }
        } else if reasons.isEmpty, let inhibition = held {
            inhibition.release()
            state.withLock { $0.desktop = nil }
            log.info("released the desktop portal's idle inhibitor")
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
