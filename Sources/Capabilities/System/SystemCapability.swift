import Config
import Glibc
import Kit
import Support

/// system.run with exec approvals, system.which and the approvals document (docs/PROTOCOL.md §6.4).
/// Commands run as the daemon's user, in their own process group, with a sanitized environment.
final class SystemCapability: Capability, CapabilityLifecycle, GatewaySessionAware, SelfDiagnosing, ControlQueryable, Sendable {
    let manifest: BundleManifest
    let settings: SystemSettings
    let approvals: ApprovalsStore
    /// The daemon's environment, which commands inherit (minus the blocked keys).
    let environment: [String: String]
    /// For the approvals' `lastUsedAt`.
    let clock: any NodeClock
    /// Maps a skill's `node://<node id>/skills/<name>` cwd to its directory (SkillCwd).
    let skills: SkillLocator
    private let log = Logger(component: "system")
    private let link = Locked<GatewayLink?>(nil)
    /// Plans system.run.prepare issued, which an operator's approval may be for.
    let issuedPlans = IssuedPlans()

    init(manifest: BundleManifest, settings: SystemSettings, approvals: ApprovalsStore, environment: [String: String],
         clock: any NodeClock = SystemClock(), skills: SkillLocator = .none) {
        self.manifest = manifest
        self.settings = settings
        self.approvals = approvals
        self.environment = environment
        self.clock = clock
        self.skills = skills
    }

    var handlers: [CommandHandler] { SystemCommands.handlers(self) }

    func availability() async -> Availability {
        if let problem = settings.sandbox.problem(setting: "capabilities.system") { return .unavailable(problem) }
        for dir in settings.sandbox.writable where !dir.hasPrefix("/") {
            return .unavailable("capabilities.system.sandboxWritable: \"\(dir)\" is not an absolute path")
        }
        return .available
    }

    func start() async -> Availability {
        if geteuid() == 0 {
            log.warn("system.run is enabled and the node runs as root: every approved command runs as root; run the node as an ordinary user")
        }
        return .available
    }

    func gatewayConnected(_ link: GatewayLink) async { self.link.withLock { $0 = link } }

    func diagnose() async -> [Diagnosis] {
        var out: [Diagnosis] = []
        do {
            let s = try approvals.snapshot()
            let p = s.document.policy(agent: "main")
            let home = PathName.home(environment)
            let effective = effectiveAllowlist(p.allowlist, home: home, path: ExecEnvironment.inherited(environment)["PATH"])
            out.append(Diagnosis(.ok, "effective exec policy (agent main): security \(min(p.security, settings.security).rawValue), ask \(max(p.ask, settings.ask).rawValue), \(effective.count) allowlist entries in force; approvals \(s.exists ? "stored" : "not set yet (defaults apply)"); approvals \(approvalsDescription)"))
            if effective.count < p.allowlist.count {
                out.append(Diagnosis(.warn, "\(p.allowlist.count - effective.count) allowlist entries are ignored: they allow every program (a shell or interpreter without an argument pattern counts) or leave capabilities.system.allowlistCeiling"))
            }
            let path = ExecEnvironment.inherited(environment)["PATH"]
            for bound in settings.allowlistCeiling ?? [] {
                if let runner = CodeRunners.covered(by: AllowlistPatterns.canonical(bound, home: home), home: home, path: path) {
                    out.append(Diagnosis(.warn, "allowlistCeiling \"\(bound)\" covers \(runner) (a shell, interpreter or program runner): the gateway may add entries for such programs only with an argument pattern; a narrower ceiling says what you mean"))
                }
            }
            out.append(Diagnosis(.ok, settings.allowlistCeiling.map { "allowlist ceiling: \($0.joined(separator: ", "))" }
                                 ?? "no allowlist ceiling (capabilities.system.allowlistCeiling): the gateway may add entries, none that allows every program"))
        } catch {
            out.append(Diagnosis(.fail, "exec approvals: \(error.message)"))
        }
        if geteuid() == 0 { out.append(Diagnosis(.warn, "the node runs as root, so approved commands do too; run it as an ordinary user")) }
        switch settings.sandbox.kind {
        case .none: out.append(Diagnosis(.ok, "commands run unsandboxed as this user (capabilities.system.sandbox: \"bwrap\" confines them)"))
        case .bwrap:
            if let problem = settings.sandbox.problem(setting: "capabilities.system") { out.append(Diagnosis(.fail, problem)) }
            else { out.append(Diagnosis(.ok, "commands run under bubblewrap (network \(settings.sandbox.network ? "on" : "off"))")) }
        }
        out.append(Diagnosis(.ok, "the gateway runs system.* only after an operator approves this node's command surface (openclaw nodes approve)"))
        return out
    }

    private var approvalsDescription: String {
        switch settings.approvals {
        case .device: return "count only when made at the device (openclaw-node approvals approve PLAN; capabilities.system.approvals is \"device\")"
        case .gateway where settings.ask == .off: return "relayed by the gateway never count (ask is off in the config); only one made at the device clears the denylist"
        case .gateway: return "relayed by the gateway count only for plans this node prepared, never for the denylist (capabilities.system.approvals: \"device\" counts only approvals made here)"
        }
    }

    private func send(_ event: NodeEvent, _ payload: JSONValue) async {
        guard let link = link.withLock({ $0 }) else { return }
        _ = await link.send(event, payload)
    }

    // MARK: system.run

    func run(_ requested: SystemRunParams, _ ctx: InvocationContext) async throws(NodeError) -> SystemRunResult {
        // A skill's cwd locator becomes its directory first; everything below (plan check,
        // approvals, allowlist, sandbox) sees that directory like any other cwd.
        let p = try SkillCwd.resolved(requested, skills)
        let argv = p.argv
        let runId = p.resolvedRunId
        let sessionKey = p.sessionKey
        let base = ExecEnvironment.inherited(environment)
        let analysis = ShellAnalysis.analyse(argv, cwd: p.cwd, path: base["PATH"])
        let commandText = p.rawCommand ?? analysis.payload ?? CommandText.format(argv)

        func deny(_ message: String, reason: String?) async -> NodeError {
            log.info("system.run [\(runId)] denied: \(message)")
            if let reason { await send(.execDenied, ExecEvents.denied(sessionKey: sessionKey, runId: runId, command: commandText, reason: reason)) }
            return NodeError(.unavailable, verbatim: message)
        }

        if p.needsScreenRecording == true {
            throw await deny("PERMISSION_MISSING: screenRecording", reason: "permission:screenRecording")
        }
        if let plan = p.systemRunPlan, plan.argv != argv || plan.cwd != p.cwd {
            throw await deny("SYSTEM_RUN_DENIED: execution plan mismatch", reason: "execution-plan-miss")
        }
        var env: [String: String]
        switch ExecEnvironment.build(base: environment, overrides: p.env, allowed: settings.envAllow) {
        case .success(let e): env = e
        case .failure(let rejected): throw await deny(rejected.message, reason: nil)
        }
        let planKey = IssuedPlans.key(argv: p.argv, cwd: p.cwd, env: p.env, agent: p.agentId)
        let approval = approvalFor(p, key: planKey, runId: runId)
        let approved = approval.counts
        let decision = try evaluate(argv: argv, analysis: analysis, commandText: commandText, env: env, cwd: p.cwd,
                                    agent: p.agentId, approvedByAsk: approved, approvedAtDevice: approval.atDevice)
        if let denial = decision.denial {
            // Where an approval at the device would do, say how to give one for this very plan.
            let waiting = issuedPlans.pending().first { $0.id == String(planKey.prefix(12)) }
            let atDevice = denial.reason == "denylist-hit" || (settings.approvals == .device && denial.reason == "approval-required")
            if atDevice, let waiting {
                throw await deny(denial.message + " (plan \(waiting.id): approve on the device with `openclaw-node approvals approve \(waiting.id)`, then run it again)", reason: denial.reason)
            }
            throw await deny(denial.message, reason: denial.reason)
        }
        // git under the allowlist: no option that writes a file or names a program, and no config
        // file this account can write that names one (GitGuard: the allowlisted-git chain).
        if decision.security == .allowlist, !approved {
            let segments = analysis.ok ? analysis.segments : [argv]
            var git = false
            for seg in segments {
                guard let path = ExecutableResolver.resolve(seg[0], path: env["PATH"], cwd: p.cwd), GitGuard.isGit(path, path: env["PATH"]) else { continue }
                git = true
                if let why = GitGuard.argumentRefusal(seg) ?? GitGuard.configRefusal(git: path, globals: GitGuard.globals(seg), cwd: p.cwd, env: env) {
                    throw await deny(why, reason: "allowlist-miss")
                }
            }
            // And it runs with hooks and fsmonitor off, whatever its files say.
            if git { env = GitGuard.environment(env) }
        }
        // An approval is used once: the plan goes now that it let this run through (a second run
        // racing for the same plan is refused like one without an approval).
        if approved, !issuedPlans.take(planKey), decision.denial == nil, !decision.durableApproval {
            throw await deny("SYSTEM_RUN_DENIED: approval required", reason: "approval-required")
        }

        let started = ContinuousClock.now
        var outcome: CommandRunner.Outcome
        if let executable = ExecutableResolver.resolve(argv[0], path: env["PATH"], cwd: p.cwd) {
            let timeout = p.programTimeout
            // What was checked is what runs: an allowlisted chain runs with each program pinned to
            // the path it matched, and without the login profile (docs/SECURITY.md).
            var program = (executable: executable, argv: argv)
            if let pinned = decision.pinned { program = (executable, [argv[0], "-c", pinned]) }
            log.info("system.run [\(runId)] \(PathName.lastComponent(executable)) (\(argv.count) args, \(commandText.count) chars) starting")
            log.debug("system.run [\(runId)] \(decision.pinned ?? commandText)")
            var seccomp: Int32? = nil
            if settings.sandbox.needsSeccomp {
                guard let fd = UnixSocketFilter.descriptor() else {
                    throw await deny("SYSTEM_RUN_DENIED: the sandbox's Unix-socket filter cannot be built on this machine", reason: nil)
                }
                seccomp = fd
            }
            let boxed: (executable: String, argv: [String])
            switch settings.sandbox.wrap(executable: program.executable, argv: program.argv, cwd: p.cwd, seccompFD: seccomp.map { _ in 3 }) {
            case .success(let b): boxed = b
            case .failure(let refused):
                if let seccomp { close(seccomp) }
                throw await deny("SYSTEM_RUN_DENIED: sandbox: \(refused.message)", reason: "sandbox-path")
            }
            // Over a gateway, and when configured (streamOutput), the output also streams as progress
            // while the command runs.
            let stream = settings.streamOutput && ctx.duplex.isOpen ? OutputProgress(ctx.duplex) : nil
            let pump: Task<Void, Never>? = stream.map { s in Task { await s.run() } }
            var runner = CommandRunner(executable: boxed.executable, argv: boxed.argv, environment: env, cwd: p.cwd,
                                       timeout: timeout, extraFDs: seccomp.map { [3: $0] } ?? [:])
            if let stream { runner.onOutput = { @Sendable (fd: Int, bytes: ArraySlice<UInt8>) in stream.append(fd, bytes) } }
            outcome = await runner.run()
            stream?.finish()
            // Cancelled: the caller has its answer; what was not streamed yet is not waited for.
            if ctx.isCancelled { pump?.cancel() } else { await pump?.value }
            if p.approvalDecision == "allow-always", approved, outcome.error == nil, !decision.durableApproval, !InlineEval.present(analysis) {
                rememberAlways(commandText: commandText, executable: executable, agent: p.approvalAgent, runId: runId)
            }
        } else {
            outcome = CommandRunner.Outcome()
            outcome.error = "\(argv[0]): command not found"
        }
        let ms = (ContinuousClock.now - started).milliseconds
        log.info("system.run [\(runId)] finished in \(ms) ms: " + (outcome.timedOut ? "timed out" : outcome.cancelled ? "cancelled"
                 : outcome.error.map { "error: \($0)" } ?? "exit \(outcome.exitCode.map(String.init) ?? "?")"))
        await send(.execFinished, ExecEvents.finished(sessionKey: sessionKey, runId: runId, command: commandText, outcome: outcome,
                                                        suppressNotifyOnExit: p.suppressNotifyOnExit))
        if outcome.cancelled { throw NodeError(.cancelled, "system.run was cancelled; the command's process group was killed") }
        return SystemRunResult(timedOut: outcome.timedOut, success: outcome.success, stdout: outcome.stdout, stderr: outcome.stderr,
                               error: outcome.error, truncated: outcome.truncated, exitCode: outcome.exitCode)
    }

    struct RunApproval { var counts = false; var atDevice = false }

    /// Whether this run is approved (docs/SECURITY.md, "What counts as an approval"). An approval
    /// made at the device for this run's plan always counts (and is the only one that clears the
    /// denylist). One the gateway relays counts only with `approvals: "gateway"`, when the config lets
    /// an operator be asked at all (`ask` is not "off"), and only for a plan this node issued with
    /// system.run.prepare for exactly this argv, cwd, environment and agent — once. A flag alone is
    /// not an operator's decision.
    func approvalFor(_ p: SystemRunParams, key: String, runId: String) -> RunApproval {
        let plan = issuedPlans.plan(key)
        if let plan, plan.approvedAtDevice {
            log.info("system.run [\(runId)] plan \(plan.id) was approved at the device")
            return RunApproval(counts: true, atDevice: true)
        }
        guard p.approvedByAsk else { return RunApproval() }
        guard settings.approvals == .gateway else {
            log.info("system.run [\(runId)] the gateway's approval does not count: capabilities.system.approvals is \"device\" (approve the plan on this machine)")
            return RunApproval()
        }
        guard settings.ask != .off else {
            log.info("system.run [\(runId)] the gateway's approval does not count: capabilities.system.ask is \"off\" (no operator is asked on this node)")
            return RunApproval()
        }
        guard p.systemRunPlan != nil, plan != nil else {
            log.info("system.run [\(runId)] the gateway's approval does not count: it is not for a plan this node issued (system.run.prepare) for this command, cwd and environment")
            return RunApproval()
        }
        return RunApproval(counts: true)
    }

    // MARK: approvals made at the device (openclaw-node approvals pending|approve)

    func controlQuery(_ request: JSONValue) async -> Result<JSONValue, NodeError> {
        switch request["op"]?.stringValue {
        case "plans":
            return .success(.array(issuedPlans.pending().map(Self.describe)))
        case "approve":
            guard let id = request["plan"]?.stringValue else { return .failure(.invalidRequest("approve needs a plan id")) }
            guard let plan = issuedPlans.approveAtDevice(id) else {
                return .failure(.invalidRequest("no plan waiting has id \(id) (openclaw-node approvals pending lists them; a plan is valid for an hour and forgotten at a restart)"))
            }
            log.info("plan \(plan.id) approved at the device: \(plan.commandText) (agent \(plan.agent))")
            return .success(Self.describe(plan))
        default:
            return .failure(.invalidRequest("system control queries: {\"op\":\"plans\"} or {\"op\":\"approve\",\"plan\":ID}"))
        }
    }

    static func describe(_ plan: IssuedPlans.Plan) -> JSONValue {
        ["id": .string(plan.id), "command": .string(plan.commandText), "agent": .string(plan.agent),
         "ageSeconds": .number(Double((ContinuousClock.now - plan.issuedAt).components.seconds)),
         "approvedAtDevice": .bool(plan.approvedAtDevice)]
    }

    struct Decision {
        let denial: ExecPolicy.Denial?
        let durableApproval: Bool
        let security: ExecSecurity
        let ask: ExecAsk
        /// The script to run instead of the shell wrapper's own, each program pinned (allowlist runs).
        var pinned: String? = nil
        /// A program of the run is on the config's denylist.
        var denylisted = false
    }

    /// The allowlist entries that count: canonical, inside the ceiling, none that covers every program.
    func effectiveAllowlist(_ entries: [AllowlistEntry], home: String, path: String?) -> [AllowlistEntry] {
        entries.compactMap { e in
            var e = e
            let canonical = AllowlistPatterns.canonical(e.pattern, home: home)
            if let why = AllowlistPatterns.refusal(e.pattern, argPattern: e.argPattern, canonical: canonical, ceiling: settings.allowlistCeiling, home: home, path: path) {
                log.warn("exec approvals: ignoring an entry: \(why)")
                return nil
            }
            e.canonicalPattern = canonical
            return e
        }
    }

    /// The policy inputs for this run, from config, the approvals document and the command.
    func evaluate(argv: [String], analysis: ShellAnalysis, commandText: String, env: [String: String], cwd: String?,
                  agent: String?, approvedByAsk: Bool, approvedAtDevice: Bool = false) throws(NodeError) -> Decision {
        let doc = try approvals.snapshot().document
        let policy = doc.policy(agent: agent ?? "main")
        let security = min(policy.security, settings.security)
        let ask = max(policy.ask, settings.ask)
        let home = PathName.home(environment)
        let allowlist = effectiveAllowlist(policy.allowlist, home: home, path: env["PATH"])
        let segments = analysis.ok ? analysis.segments : [argv]
        let resolved = segments.map { ExecutableResolver.resolve($0[0], path: env["PATH"], cwd: cwd) }
        let real = resolved.map { $0.map(PathName.resolvingSymlinks) }
        let satisfied = analysis.ok && segments.indices.allSatisfy { i in
            guard let path = resolved[i], let realPath = real[i] else { return false }
            return allowlist.contains { AllowlistMatch.matches($0, argv: segments[i], resolvedPath: path, realPath: realPath, home: home) }
        }
        let durable = policy.allowlist.contains { $0.pattern == AllowlistMatch.commandPattern(commandText) }
        let denylist = settings.denylist.map { ($0, AllowlistPatterns.canonical($0, home: home)) }
        let denylisted = zip(resolved, real).contains { path, realPath in
            guard let path, let realPath else { return false }
            return denylist.contains { PathGlob.matches($0.0, path, home: home) || PathGlob.matches($0.1, realPath, home: home) }
        }
        log.debug("policy for agent \(agent ?? "main"): security \(security.rawValue), ask \(ask.rawValue), \(allowlist.count) entries, analysis \(analysis.ok ? "ok" : "failed"), allowlist \(satisfied ? "satisfied" : "missed")\(durable ? ", allow-always" : "")\(denylisted ? ", denylisted" : "")")
        let input = ExecPolicy.Input(security: security, ask: ask, analysisOk: analysis.ok, allowlistSatisfied: satisfied,
                                     durableApproval: durable, denylisted: denylisted, approvedByAsk: approvedByAsk,
                                     approvedAtDevice: approvedAtDevice)
        var d = Decision(denial: ExecPolicy.evaluate(input), durableApproval: durable, security: security, ask: ask)
        d.denylisted = denylisted
        // Under the allowlist, a shell chain runs with the very programs that were checked.
        if security == .allowlist, analysis.shellWrapper, analysis.ok, resolved.allSatisfy({ $0 != nil }) {
            d.pinned = analysis.pinnedScript(resolved: resolved.compactMap { $0 })
        }
        return d
    }

    /// An allow-always decision: the exact command is allowed from now on (argv-bound, as upstream).
    private func rememberAlways(commandText: String, executable: String, agent: String, runId: String) {
        let entry: JSONValue = [
            "id": .string(SecureRandom.uuid()), "pattern": .string(AllowlistMatch.commandPattern(commandText)),
            "source": "allow-always", "lastUsedAt": .number(Double(clock.wallMilliseconds)),
            "lastUsedCommand": .string(commandText), "lastResolvedPath": .string(executable),
        ]
        do {
            try approvals.addEntry(entry, agent: agent)
            log.info("system.run [\(runId)] allow-always: the command is now allowed for agent \(agent)")
        } catch {
            log.warn("system.run [\(runId)] allow-always not saved: \(error.message)")
        }
    }

    // MARK: system.run.prepare, system.which, approvals

    func prepare(_ requested: SystemRunPrepareParams, _ ctx: InvocationContext) async throws(NodeError) -> SystemRunPrepareResult {
        let p = try SkillCwd.resolved(requested, skills)
        let argv = p.argv
        if let app = p.installedApp { try Self.checkInstalledApp(app, argv: argv, environment: environment) }
        let analysis = ShellAnalysis.analyse(argv, cwd: p.cwd, path: ExecEnvironment.inherited(environment)["PATH"])
        let commandText = p.rawCommand ?? analysis.payload ?? CommandText.format(argv)
        let env: [String: String]
        switch ExecEnvironment.build(base: environment, overrides: p.env, allowed: settings.envAllow) {
        case .success(let e): env = e
        case .failure(let rejected): throw NodeError(.invalidRequest, verbatim: rejected.message)
        }
        let d = try evaluate(argv: argv, analysis: analysis, commandText: commandText, env: env, cwd: p.cwd,
                             agent: p.agentId, approvedByAsk: false)
        if settings.sandbox.kind == .bwrap, let cwd = p.cwd, let why = settings.sandbox.refusal(cwd) {
            throw NodeError(.invalidRequest, verbatim: "SYSTEM_RUN_DENIED: sandbox: cwd \(why)")
        }
        // The plan an operator's approval may later be given for: this argv, cwd, env and agent.
        let issued = issuedPlans.issue(IssuedPlans.key(argv: argv, cwd: p.cwd, env: p.env, agent: p.agentId),
                                       commandText: commandText, agent: p.agentId ?? "main")
        if settings.approvals == .device || d.denylisted {
            log.info("system.run.prepare: plan \(issued.id) for agent \(issued.agent): \(commandText) — to allow it, run on this machine: openclaw-node approvals approve \(issued.id)")
        }
        // The plan names the cwd as the caller did (a skill's locator stays one): the run maps it again.
        var plan = SystemRunPrepareResult.Plan(argv: argv, cwd: requested.cwd, commandText: commandText, agentId: p.agentId, sessionKey: p.sessionKey)
        plan.installedApp = p.installedApp
        return SystemRunPrepareResult(plan: plan, execPolicy: .init(security: d.security.rawValue, ask: d.ask.rawValue))
    }

    static let installedAppChanged: NodeError.Code = "INSTALLED_APP_CHANGED"

    /// A plan for an installed app (the gateway's app_launch): the app must still be at the revision
    /// the operator is asked about, and the command exactly its one program.
    static func checkInstalledApp(_ app: InstalledAppRef, argv: [String], environment: [String: String]) throws(NodeError) {
        guard let entry = DesktopEntries.load(environment, locale: nil).entries.first(where: { $0.appId == app.appId }),
              entry.appRevision == app.appRevision else {
            throw NodeError(installedAppChanged, verbatim: "INSTALLED_APP_CHANGED: refresh inventory before approval")
        }
        guard argv == [entry.executable] else {
            throw NodeError(.invalidRequest, verbatim: "INVALID_REQUEST: installedApp: command must be exactly [\"\(entry.executable)\"]")
        }
    }

    func which(_ p: SystemWhichParams, _ ctx: InvocationContext) async throws(NodeError) -> SystemWhichResult {
        let path = ExecEnvironment.inherited(environment)["PATH"]
        var found: [String: String] = [:]
        for name in p.names {
            if let full = ExecutableResolver.resolve(name, path: path, cwd: nil) { found[name] = full }
        }
        return SystemWhichResult(bins: found)
    }

    func approvalsGet(_ p: NoParams, _ ctx: InvocationContext) async throws(NodeError) -> ExecApprovalsSnapshotResult { try approvals.get() }

    /// The gateway's write: every allowlist pattern stored canonical, and refused when it leaves
    /// the config's ceiling (or, without one, would allow every program).
    func approvalsSet(_ p: ExecApprovalsSetParams, _ ctx: InvocationContext) async throws(NodeError) -> ExecApprovalsSnapshotResult {
        let home = PathName.home(environment)
        let path = ExecEnvironment.inherited(environment)["PATH"]
        let ceiling = settings.allowlistCeiling
        let result = try approvals.set(file: p.document, baseHash: p.baseHash) { (written: String, argPattern: String?) throws(NodeError) -> String in
            let canonical = AllowlistPatterns.canonical(written, home: home)
            if let why = AllowlistPatterns.refusal(written, argPattern: argPattern, canonical: canonical, ceiling: ceiling, home: home, path: path) {
                throw NodeError.invalidRequest(why)
            }
            return canonical
        }
        log.info("exec approvals replaced (hash \(result.hash.prefix(12)))")
        return result
    }
}
