import Support

/// The plans this node issued with system.run.prepare, so that an approval counts only for one of
/// them (same argv, cwd, environment overrides and agent), once, within an hour. Each has a short
/// id a person at the device can name: `openclaw-node approvals approve <id>` records an approval
/// made at the device, the only kind that clears the denylist, and with
/// `capabilities.system.approvals: "device"` the only kind that counts at all (the gateway can
/// prepare a plan and then claim to approve it itself). Kept in memory: after a restart the gateway
/// prepares again.
final class IssuedPlans: Sendable {
    static let lifetime: Duration = .seconds(3600)
    static let limit = 1024

    struct Plan: Sendable, Equatable {
        /// The first 12 hex digits of the key: what the CLI and the log name.
        let id: String
        let commandText: String
        let agent: String
        let issuedAt: ContinuousClock.Instant
        var approvedAtDevice = false
    }

    private let issued = Locked<[String: Plan]>([:])

    static func key(argv: [String], cwd: String?, env: [String: String]?, agent: String?) -> String {
        let envPart: JSONValue = .array((env ?? [:]).filter { $0.key != "PATH" }.sorted { $0.key < $1.key }
            .map { .array([.string($0.key), .string($0.value)]) })
        let v: JSONValue = [.array(argv.map { .string($0) }), cwd.map { .string($0) } ?? .null, envPart, .string(agent ?? "main")]
        return SHA256.hex(v.jsonString())
    }

    /// Records the plan (again: a plan prepared twice keeps a device approval it already has).
    @discardableResult
    func issue(_ key: String, commandText: String, agent: String) -> Plan {
        issued.withLock { issued in
            let now = ContinuousClock.now
            issued = issued.filter { now - $0.value.issuedAt < Self.lifetime }
            if issued[key] == nil, issued.count >= Self.limit, let oldest = issued.min(by: { $0.value.issuedAt < $1.value.issuedAt }) {
                issued[oldest.key] = nil
            }
            // Prepared again: the same plan, its hour still counted from the first time (an approval
            // must not be kept alive by preparing it over and over).
            var plan = Plan(id: String(key.prefix(12)), commandText: commandText, agent: agent, issuedAt: issued[key]?.issuedAt ?? now)
            plan.approvedAtDevice = issued[key]?.approvedAtDevice ?? false
            issued[key] = plan
            return plan
        }
    }

    /// The plan for `key` while it is valid (not used up: see `take`).
    func plan(_ key: String) -> Plan? {
        issued.withLock { issued in
            guard let plan = issued[key], ContinuousClock.now - plan.issuedAt < Self.lifetime else { return nil }
            return plan
        }
    }

    /// Uses up the plan for `key`: true when it was there and valid. A run takes its plan only once
    /// the policy let it through, so a refused run (the denylist) leaves the plan for an approval
    /// at the device.
    func take(_ key: String) -> Bool {
        issued.withLock { issued in
            guard let plan = issued.removeValue(forKey: key) else { return false }
            return ContinuousClock.now - plan.issuedAt < Self.lifetime
        }
    }

    /// A person at the device approves the plan whose id starts with `id` (at least 6 hex digits,
    /// and only one plan may match).
    func approveAtDevice(_ id: String) -> Plan? {
        let prefix = id.lowercased()
        guard prefix.count >= 6, prefix.allSatisfy(\.isHexDigit) else { return nil }
        return issued.withLock { issued in
            let now = ContinuousClock.now
            let matches = issued.filter { $0.key.hasPrefix(prefix) && now - $0.value.issuedAt < Self.lifetime }
            guard matches.count == 1, let (key, found) = matches.first else { return nil }
            var plan = found
            plan.approvedAtDevice = true
            issued[key] = plan
            return plan
        }
    }

    /// Plans still valid, oldest first.
    func pending() -> [Plan] {
        issued.withLock { issued in
            let now = ContinuousClock.now
            return issued.values.filter { now - $0.issuedAt < Self.lifetime }.sorted { $0.issuedAt < $1.issuedAt }
        }
    }
}
