import Support

/// When each computer-use execution last took a screen.snapshot, shared by the screen and computer
/// bundles through this one library: computer.act refuses an execution that a person interrupted
/// until it has looked at the screen again.
public final class SnapshotLedger: Sendable {
    public static let shared = SnapshotLedger()
    private let last = Locked<[String: ContinuousClock.Instant]>([:])

    public func record(executionId: String, at instant: ContinuousClock.Instant = .now) {
        last.withLock { last in
            if last.count > 256 { last.removeAll() }  // executions are short; never grow without bound
            last[executionId] = instant
        }
    }

    public func lastSnapshot(executionId: String) -> ContinuousClock.Instant? { last.withLock { $0[executionId] } }
}
