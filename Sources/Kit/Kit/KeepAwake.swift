import Support

/// Keeping the device awake while it is in use — a kiosk's canvas on screen, a desktop stream, a
/// spoken conversation: the node holds one system inhibitor (logind's idle and sleep lock) while
/// any hold is taken and lets it go with the last. A capability takes a hold when its use starts
/// and releases it when the use ends (or drops it: a hold released by nobody ends with its object).
public protocol KeepAwake: Sendable {
    /// A hold named for people (`status` lists it): "canvas window shown".
    func hold(_ reason: String) -> KeepAwakeHold
}

/// One taken hold; `release()` ends it (once: later calls do nothing).
public final class KeepAwakeHold: Sendable {
    private let releaser: Locked<(@Sendable () -> Void)?>

    public init(release: @escaping @Sendable () -> Void) { releaser = Locked(release) }

    public func release() {
        let r = releaser.withLock { r in defer { r = nil }; return r }
        r?()
    }

    deinit { release() }
}

/// Outside a node (a bundle's own tests, one-shot tools): holds that keep nothing awake.
public struct NoKeepAwake: KeepAwake {
    public init() {}
    public func hold(_ reason: String) -> KeepAwakeHold { KeepAwakeHold {} }
}
