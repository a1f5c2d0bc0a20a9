import Support

/// The plans this node issued with system.run.prepare, so that an approval the gateway carries is
/// honoured only for one of them (same argv, cwd, environment overrides and agent), once, within
/// an hour. Kept in memory: after a restart the gateway prepares again.
final class IssuedPlans: Sendable {
    static let lifetime: Duration = .seconds(3600)
    static let limit = 1024
    private let issued = Locked<[String: ContinuousClock.Instant]>([:])

    static func key(argv: [String], cwd: String?, env: [String: String]?, agent: String?) -> String {
        let envPart: JSONValue = .array((env ?? [:]).filter { $0.key != "PATH" }.sorted { $0.key < $1.key }
            .map { .array([.string($0.key), .string($0.value)]) })
        let v: JSONValue = [.array(argv.map { .string($0) }), cwd.map { .string($0) } ?? .null, envPart, .string(agent ?? "main")]
        return SHA256.hex(v.jsonString())
    }

    func issue(_ key: String) {
        issued.withLock { issued in
            let now = ContinuousClock.now
            issued = issued.filter { now - $0.value < Self.lifetime }
            if issued.count >= Self.limit, let oldest = issued.min(by: { $0.value < $1.value }) { issued[oldest.key] = nil }
            issued[key] = now
        }
    }

    /// Whether `key` was issued and is still valid; it is used up.
    func take(_ key: String) -> Bool {
        issued.withLock { issued in
            guard let at = issued.removeValue(forKey: key) else { return false }
            return ContinuousClock.now - at < Self.lifetime
        }
    }
}
