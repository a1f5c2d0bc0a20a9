import Glibc

/// The clients a local server serves at once, so that idle ones cannot lock the rest out: at most
/// `limit`; when all are taken, the one idle longest is dropped to make room (its socket shut
/// down, which ends the read its thread waits in), and only when every one is busy is a newcomer
/// refused. Used by the control socket and `mcp serve --http`.
public final class ConnectionSlots: Sendable {
    private struct Entry { let fd: Int32; var busy: Bool; var idleSince: ContinuousClock.Instant }
    private struct Table { var entries: [Int: Entry] = [:]; var nextId = 0 }
    private let table = Locked(Table())

    public init() {}

    /// A slot for the client on `fd`, or nil when every slot is busy. The dropped client's socket
    /// is shut down here (under the lock, so its descriptor cannot have been closed and reused
    /// yet: its thread leaves the table before closing it).
    public func admit(_ fd: Int32, limit: Int) -> (id: Int, evicted: Bool)? {
        table.withLock { t in
            var evicted = false
            if t.entries.count >= limit {
                guard let idle = t.entries.filter({ !$0.value.busy }).min(by: { $0.value.idleSince < $1.value.idleSince }) else { return nil }
                shutdown(idle.value.fd, Int32(SHUT_RDWR))
                t.entries[idle.key] = nil
                evicted = true
            }
            t.nextId += 1
            t.entries[t.nextId] = Entry(fd: fd, busy: false, idleSince: .now)
            return (t.nextId, evicted)
        }
    }

    /// Busy while it is being served; idle (and evictable) while it waits for the client.
    public func setBusy(_ id: Int, _ busy: Bool) {
        table.withLock { t in
            t.entries[id]?.busy = busy
            if !busy { t.entries[id]?.idleSince = .now }
        }
    }

    /// Called by the client's thread before it closes the descriptor.
    public func leave(_ id: Int) { table.withLock { $0.entries[id] = nil } }

    public var count: Int { table.withLock { $0.entries.count } }
}
