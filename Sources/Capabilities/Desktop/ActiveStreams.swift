import Kit
import Support

/// The desktop streams running now, each with the flag that ends it: presence going away or the
/// node stopping ends them all, and the invoke then answers with why (not a bare "cancelled").
final class ActiveStreams: Sendable {
    private struct Entry { let flag: CancelFlag; var endedBecause: NodeError? }
    private let entries = Locked<[String: Entry]>([:])

    func add(_ id: String) -> CancelFlag {
        let f = CancelFlag()
        entries.withLock { $0[id] = Entry(flag: f, endedBecause: nil) }
        return f
    }

    /// Forgets the stream; the error it was ended with, if `endAll` ended it.
    @discardableResult
    func remove(_ id: String) -> NodeError? { entries.withLock { $0.removeValue(forKey: id)?.endedBecause } }

    /// Ends every stream with `reason` as its invoke's answer; how many there were.
    @discardableResult
    func endAll(_ reason: NodeError) -> Int {
        let flags = entries.withLock { e -> [CancelFlag] in
            for id in e.keys where e[id]?.endedBecause == nil { e[id]?.endedBecause = reason }
            return e.values.map(\.flag)
        }
        for f in flags { f.cancel() }
        return flags.count
    }

    /// Waits until every stream has ended — its server stopped, its directory removed — at most
    /// `limit`; false when some still run. (The node's stop waits here: an x11vnc started for a
    /// stream lives in a process group of its own and would outlive a node that did not wait.)
    func waitUntilEmpty(within limit: Duration) async -> Bool {
        let deadline = ContinuousClock.now + limit
        while entries.withLock({ !$0.isEmpty }) {
            if ContinuousClock.now > deadline { return false }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return true
    }
}
