import Glibc
import Support

/// A directory's names in upstream's order, sorted once and kept for the pages that follow: dir.list
/// read, stat'ed and sorted the whole directory for every page (200,000 entries: ~190 MB and 5 s a
/// page). Names only (no stat: a page stats its own few thousand), each lower-cased once rather than
/// at every comparison, and kept while the directory is unchanged (device, inode, mtime, ctime) for
/// two minutes, two directories at most. A directory of more than `maxNames` is refused.
enum SortedNames {
    static let maxNames = 500_000
    static let lifetime: Duration = .seconds(120)

    struct Key: Hashable, Sendable { let dev: UInt64, ino: UInt64, mtime: Int, mtimeNs: Int, ctime: Int, ctimeNs: Int }
    struct TooMany: Error { let count: Int }

    private static let cache = Locked<[(key: Key, at: ContinuousClock.Instant, names: [DirectoryEntries.Name])]>([])

    /// The entries (names and d_type, no stat) of the directory open at `fd`, sorted.
    static func of(_ fd: Int32) -> Result<[DirectoryEntries.Name], DirectoryEntries.Failure> {
        var st = stat()
        guard fstat(fd, &st) == 0 else { return .failure(.errno(Errno.current)) }
        let key = Key(dev: UInt64(st.st_dev), ino: UInt64(st.st_ino), mtime: st.st_mtim.tv_sec, mtimeNs: st.st_mtim.tv_nsec,
                      ctime: st.st_ctim.tv_sec, ctimeNs: st.st_ctim.tv_nsec)
        let now = ContinuousClock.now
        if let hit = cache.withLock({ c in c.first { $0.key == key && now - $0.at < lifetime }?.names }) { return .success(hit) }
        let listed: [DirectoryEntries.Name]
        switch DirectoryEntries.names(fd, limit: maxNames) {
        case .success(let l): listed = l
        case .failure(let f): return .failure(f)
        }
        let sorted = sort(listed) { $0.name }
        // A directory changed within the last second may change again within the same timestamp
        // tick (coarse on ext4, cached on NFS): then the key would not see it, so it is not kept.
        var wall = timespec()
        clock_gettime(CLOCK_REALTIME, &wall)
        guard wall.tv_sec - st.st_mtim.tv_sec > 1, wall.tv_sec - st.st_ctim.tv_sec > 1 else { return .success(sorted) }
        cache.withLock { c in
            c.removeAll { $0.key == key || now - $0.at >= lifetime }
            c.append((key, now, sorted))
            if c.count > 2 { c.removeFirst(c.count - 2) }
        }
        return .success(sorted)
    }

    /// DirectoryEntries.localeOrder, with each name lower-cased once (sorted as indices, so the
    /// entries themselves are not copied around).
    static func sort<E>(_ entries: [E], name: (E) -> String) -> [E] {
        let lower = entries.map { name($0).lowercased() }
        let order = entries.indices.sorted { a, b in
            if lower[a] != lower[b] { return lower[a].unicodeScalars.lexicographicallyPrecedes(lower[b].unicodeScalars) }
            return DirectoryEntries.localeOrder(name(entries[a]), name(entries[b]))
        }
        return order.map { entries[$0] }
    }
}
