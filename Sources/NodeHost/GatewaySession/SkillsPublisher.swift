import Kit
import Skills
import Support

/// Publishes the node-hosted skills on one gateway session, the way the reference node host does:
/// right after hello-ok, then again whenever what the catalog reads changes (checked every
/// `checkInterval`) or a config reload changes the settings (`NodeSkills.changes` wakes it).
///
/// - A value equal to the last one this session's gateway accepted is not sent again. Each new
///   session sends once: the gateway keeps a node's skills with its connection.
/// - A transient failure (no answer, the gateway unavailable) is retried after 250 ms, doubling up
///   to 5 s, until accepted or the skills change.
/// - `unknown method: node.skills.update` — or, on protocol 3, `unauthorized role: node` — is a
///   gateway without node-hosted skills: nothing more is sent on this session.
/// - INVALID_REQUEST is a refusal of this value: it is not sent again; a changed one is.
/// - `skills.enabled: false`: nothing is sent at all, not even an empty list.
///
/// Same shape as `HostStatsReporter`: a value the session's serve loop runs until it is cancelled.
struct SkillsPublisher: Sendable {
    static let firstRetry: Duration = .milliseconds(250)
    static let maxRetry: Duration = .seconds(5)

    let skills: NodeSkills
    /// The protocol hello-ok agreed on (3 or 4).
    let protocolVersion: Int?
    var checkInterval: Duration = SkillFingerprint.checkInterval

    enum Outcome: Equatable {
        case accepted
        case unsupported(String)
        case refused(String)
        case transient(String)
    }

    static func outcome(_ reply: Result<JSONValue, GatewayProtocol.GatewayError>, protocolVersion: Int?) -> Outcome {
        switch reply {
        case .success: return .accepted
        case .failure(let e):
            let text = e.message.isEmpty ? e.code : "\(e.code): \(e.message)"
            if e.message.contains("unknown method") { return .unsupported(text) }
            if protocolVersion == 3, e.message.contains("unauthorized role: node") { return .unsupported(text) }
            if e.code == NodeError.Code.invalidRequest.rawValue { return .refused(text) }
            return .transient(text)
        }
    }

    static func nextRetry(after previous: Duration?) -> Duration {
        guard let previous else { return firstRetry }
        return min(previous * 2, maxRetry)
    }

    /// Runs until cancelled (the session ends). `call` sends one `node.skills.update` and answers the reply.
    func run(log: Logger, call: @Sendable (JSONValue) async -> Result<JSONValue, GatewayProtocol.GatewayError>) async {
        skills.setPublished(nil)
        var lastAccepted: JSONValue?
        var refused: JSONValue?
        var retry: Duration?
        var complainedTransient = false
        var saidDisabled = false
        var seen: (generation: UInt64, fingerprint: SkillFingerprint, params: JSONValue, count: Int)?
        while !Task.isCancelled {
            let generation = skills.changes.generation
            guard let sources = skills.sources, sources.enabled else {
                if !saidDisabled { log.info("skills.enabled is false: no node.skills.update on this session") }
                saidDisabled = true
                seen = nil
                skills.setPublished(nil)
                await skills.changes.wait(after: generation, within: checkInterval)
                continue
            }
            saidDisabled = false
            let fingerprint = await BlockingExecutor.run("skills-check") { (_: CancelFlag) in SkillFingerprint.take(sources) }
            // Read again when the files changed, and after every reload (settings may differ).
            if seen == nil || seen!.generation != generation || seen!.fingerprint != fingerprint {
                let scan = await BlockingExecutor.run("skills-scan") { (_: CancelFlag) in SkillCatalog.scan(sources) }
                skills.logRejections(scan, log: log)
                seen = (generation, fingerprint, scan.params, scan.skills.count)
                if scan.params == lastAccepted { log.debug("node.skills.update: skills read again, unchanged since the gateway accepted them; not sent") }
                if scan.params == refused { log.debug("node.skills.update: skills read again, still the value the gateway refused; not sent") }
            }
            let value = seen!.params
            if value != lastAccepted && value != refused {
                switch Self.outcome(await call(value), protocolVersion: protocolVersion) {
                case .accepted:
                    lastAccepted = value; retry = nil; complainedTransient = false
                    skills.setPublished(seen!.count)
                    log.info("node.skills.update: published \(seen!.count) skill\(seen!.count == 1 ? "" : "s")")
                case .unsupported(let why):
                    log.info("node.skills.update: this gateway does not take node-hosted skills (\(why)); not sent again on this session")
                    return
                case .refused(let why):
                    refused = value; retry = nil
                    log.warn("node.skills.update: the gateway refused the skills (\(why)); not sent again until they change")
                case .transient(let why):
                    let delay = Self.nextRetry(after: retry)
                    retry = delay
                    if !complainedTransient {
                        complainedTransient = true
                        log.info("node.skills.update: not accepted (\(why)); retrying from \(delay.milliseconds) ms, doubling up to \(Self.maxRetry.milliseconds / 1000) s")
                    } else {
                        log.debug("node.skills.update: not accepted (\(why)); retrying in \(delay.milliseconds) ms")
                    }
                    await skills.changes.wait(after: generation, within: delay)
                    continue
                }
            }
            await skills.changes.wait(after: generation, within: checkInterval)
        }
    }
}
