/// Something large that is loaded on first use and let go again once nobody has used it for a
/// while: FFmpeg's codec libraries after a clip, libswscale after a snapshot. Users hold a `Lease`
/// for as long as they use the resource (a recorder for its whole life); the resource is dropped
/// only when no lease is left and `releaseAfter()` has passed since the last one ended, and the
/// next lease loads it again. Dropping it only drops this holder's reference: a resource whose
/// libraries close in deinit (DynamicLibrary's closeWhenReleased) is therefore never unmapped
/// under a caller that kept a copy, lease or not.
public final class IdleReleased<Resource: Sendable, Failure: Error>: Sendable {
    /// Keeps the resource loaded while it lives.
    public final class Lease: Sendable {
        public let resource: Resource
        private let owner: IdleReleased

        fileprivate init(_ resource: Resource, owner: IdleReleased) { self.resource = resource; self.owner = owner }

        deinit { owner.leaseEnded() }
    }

    private struct State {
        var resource: Resource?
        var leases = 0
        var timer: DeadlineTimer.Token?
        /// Bumped whenever a lease starts or a release is scheduled, so a timer that fires late
        /// (after a new lease came and went) does not release early.
        var generation: UInt64 = 0
    }

    private let state = Locked(State())
    private let load: @Sendable () -> Result<Resource, Failure>
    private let releaseAfter: @Sendable () -> Duration?
    private let released: @Sendable () -> Void

    /// `load` makes the resource (called under this holder's lock, so at most once at a time);
    /// `releaseAfter` is read when the last lease ends (nil: keep it loaded); `released` runs after
    /// the holder let go of it (to trim the heap, to log).
    public init(load: @escaping @Sendable () -> Result<Resource, Failure>,
                releaseAfter: @escaping @Sendable () -> Duration?,
                released: @escaping @Sendable () -> Void = {}) {
        self.load = load; self.releaseAfter = releaseAfter; self.released = released
    }

    /// The resource, loaded now if it is not; it stays loaded until the lease is gone.
    public func lease() -> Result<Lease, Failure> {
        let loaded = state.withLock { s -> Result<Resource, Failure> in
            if let t = s.timer { DeadlineTimer.shared.cancel(t); s.timer = nil }
            s.generation &+= 1
            if let r = s.resource { s.leases += 1; return .success(r) }
            let made = load()
            if case .success(let r) = made { s.resource = r; s.leases += 1 }
            return made
        }
        return loaded.map { Lease($0, owner: self) }
    }

    /// Whether the holder has the resource now (tests, doctor).
    public var isLoaded: Bool { state.withLock { $0.resource != nil } }

    private func leaseEnded() {
        state.withLock { s in
            s.leases -= 1
            guard s.leases == 0, let after = releaseAfter() else { return }
            s.generation &+= 1
            let generation = s.generation
            if let t = s.timer { DeadlineTimer.shared.cancel(t) }
            s.timer = DeadlineTimer.shared.schedule(at: .now + after) { [weak self] in
                guard let self else { return }
                // dlclose walks every library: not on the timer thread.
                BlockingExecutor.start("library-release") { self.releaseIfUnused(generation) }
            }
        }
    }

    private func releaseIfUnused(_ generation: UInt64) {
        // Let go of it while locked, so a lease that comes now waits and then loads afresh.
        let dropped = state.withLock { s -> Bool in
            guard s.leases == 0, s.generation == generation, s.resource != nil else { return false }
            s.timer = nil
            s.resource = nil
            return true
        }
        if dropped { released() }
    }
}
