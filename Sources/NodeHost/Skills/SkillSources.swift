import Config
import Kit
import Support

/// Where a node's skills are read from: `<stateDir>/skills` first, then `skills.dirs` in order (a
/// name found twice is the first one's). `enabled: false` means no skill is published or mapped.
package struct SkillSources: Sendable, Equatable {
    package var enabled: Bool
    /// `<stateDir>/skills`: may be missing (no skills), unlike a configured directory.
    package var stateSkills: String
    /// `skills.dirs`, `~` already expanded.
    var configured: [String]

    init(enabled: Bool, stateSkills: String, configured: [String]) {
        self.enabled = enabled; self.stateSkills = stateSkills; self.configured = configured
    }

    package init(_ config: NodeConfig) {
        self.init(enabled: config.skills.enabled, stateSkills: PathName.join(config.stateDir, "skills"),
                  configured: config.skills.dirs)
    }

    package var roots: [String] { [stateSkills] + configured }
}

/// The skills in force in this process, in one place: the publisher of every gateway session, the
/// system bundle's cwd locator (`CapabilityContext.skills`), doctor and `status` read it.
///
/// Process-wide rather than handed around because the capability factory builds the bundles'
/// contexts before the runtime exists, and a config reload keeps capabilities built under the
/// previous config: each reads the settings in force here at the time of use. `NodeRuntime`
/// configures it, the daemon again after each reload.
package final class NodeSkills: Sendable {
    package static let shared = NodeSkills()

    private struct State {
        var sources: SkillSources?
        var nodeId: (@Sendable () -> String?)?
        var cachedNodeId: String?
        /// Skills the last accepted `node.skills.update` carried (nil: none accepted yet).
        var published: Int?
        /// The rejections already logged, so a reconnect or an unchanged rescan says them once.
        var loggedRejections: [SkillRejection] = []
        /// The last scan for the locator, valid while the directories look the same.
        var lastScan: (sources: SkillSources, fingerprint: SkillFingerprint, scan: SkillScan)?
    }
    private let state = Locked(State())
    /// Bumped by `configure`: a session's publisher rescans at once after a reload.
    package let changes = ChangeSignal()

    package func configure(_ sources: SkillSources, nodeId: (@Sendable () -> String?)? = nil) {
        state.withLock { s in
            s.sources = sources
            if let nodeId { s.nodeId = nodeId; s.cachedNodeId = nil }
        }
        changes.signal()
    }

    package var sources: SkillSources? { state.withLock { $0.sources } }

    /// This node's id, read once (the device key never changes while the process runs).
    var nodeId: String? {
        if let id = state.withLock({ $0.cachedNodeId }) { return id }
        guard let read = state.withLock({ $0.nodeId }), let id = read() else { return nil }
        state.withLock { $0.cachedNodeId = id }
        return id
    }

    package var publishedCount: Int? { state.withLock { $0.published } }
    package func setPublished(_ n: Int?) { state.withLock { $0.published = n } }

    /// The rejections of `scan` not logged before (all of them after they changed), each logged once.
    package func logRejections(_ scan: SkillScan, log: Logger) {
        let fresh = state.withLock { s -> Bool in
            guard s.loggedRejections != scan.rejected else { return false }
            s.loggedRejections = scan.rejected
            return true
        }
        guard fresh else { return }
        for r in scan.rejected { log.warn("skill not published: \(r)") }
    }

    /// The directory of the published skill `name` under the settings in force, as the
    /// directories are now (a skill removed or broken since the last publication is not mapped):
    /// the fingerprint (~0.3 ms for 64 skills) decides whether the last scan still holds.
    func directory(of name: String) -> String? {
        guard let sources, sources.enabled else { return nil }
        let fingerprint = SkillFingerprint.take(sources)
        let cached = state.withLock { s in
            s.lastScan.flatMap { $0.sources == sources && $0.fingerprint == fingerprint ? $0.scan : nil }
        }
        let scan = cached ?? SkillCatalog.scan(sources)
        if cached == nil { state.withLock { $0.lastScan = (sources, fingerprint, scan) } }
        return scan.skills.first { $0.name == name }?.directory
    }

    /// What a bundle's context gets: the node id and the lookup above.
    package var locator: SkillLocator {
        SkillLocator(nodeId: { [self] in nodeId }, directory: { [self] name in directory(of: name) })
    }
}
