import Support

/// The desktop streams running now, each with the flag that ends it: presence going away or the
/// node stopping ends them all.
final class ActiveStreams: Sendable {
    private let flags = Locked<[String: CancelFlag]>([:])

    func add(_ id: String) -> CancelFlag {
        let f = CancelFlag()
        flags.withLock { $0[id] = f }
        return f
    }

    func remove(_ id: String) { _ = flags.withLock { $0.removeValue(forKey: id) } }

    /// Ends every stream; how many there were.
    @discardableResult
    func endAll() -> Int {
        let all = flags.withLock { f -> [CancelFlag] in defer { f = [:] }; return Array(f.values) }
        for f in all { f.cancel() }
        return all.count
    }
}
