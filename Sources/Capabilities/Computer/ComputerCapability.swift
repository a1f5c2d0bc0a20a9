import CXTest
import Config
import FoundationEssentials
import Glibc
import Kit
import Support
import X11Support

/// computer.act on an X11 desktop through XTest, or on a wlroots Wayland compositor through its
/// virtual pointer and keyboard (docs/PROTOCOL.md §6.5): the agent's clicks, drags,
/// scrolls, typing and key combinations, at coordinates of the screenshot it saw. One execution
/// owns the desktop at a time; its end releases whatever it still holds down.
final class ComputerCapability: Capability, CapabilityLifecycle, GatewaySessionAware, @unchecked Sendable {
    let manifest: BundleManifest
    let settings: ComputerSettings
    private let log = Logger(component: "computer")
    private let lock = Lock()
    private var input: (any ComputerInput)?
    private var owner: String?
    /// An execution a person interrupted, and when; refused until it takes a new screenshot.
    private var overridden: (execution: String, at: ContinuousClock.Instant)?
    private var watcher: UserInputWatcher?
    /// Raised by an execution's end (gateway gone, shutdown, a person at the desk): the actions
    /// running then stop waiting, release what they hold and return.
    private var interrupt = CancelFlag()

    init(manifest: BundleManifest, settings: ComputerSettings) { self.manifest = manifest; self.settings = settings }

    var handlers: [CommandHandler] { ComputerCommands.handlers(self) }

    func availability() async -> Availability {
        do { _ = try openInput() } catch { return .unavailable(error.message) }
        return .available
    }

    /// The compositor's virtual pointer and keyboard when a Wayland compositor is configured
    /// (capabilities.computer.waylandDisplay, else $WAYLAND_DISPLAY), else XTest on the X display.
    private func openInput() throws(NodeError) -> any ComputerInput {
        if let socket = settings.waylandDisplay { return try WaylandInput(socket: socket) }
        guard let display = settings.display else {
            throw NodeError(ComputerError.unavailable, "no display: WAYLAND_DISPLAY and DISPLAY are unset and neither " +
                            "capabilities.computer.waylandDisplay nor capabilities.computer.display is configured")
        }
        return try XTestInput(name: display)
    }

    /// The daemon watches for a person using the keyboard or mouse (XInput2).
    func start() async -> Availability {
        // XInput2 is X11's; a Wayland compositor shows no client the input of others.
        guard settings.waylandDisplay == nil, let display = settings.display else { return .available }
        do {
            let w = try UserInputWatcher(display: display) { [weak self] in self?.personAtTheDesk() }
            lock.withLock { watcher = w }
        } catch {
            log.warn("input from a person at the desk will not stop executions: \(error.message)")
        }
        return .available
    }

    /// A person used the keyboard or mouse: they win. The running execution stops and releases
    /// what it holds; its next action is refused until it takes a new screenshot.
    private func personAtTheDesk() {
        guard let stoppedExecution = lock.withLock({ () -> String? in
            guard let o = owner else { return nil }
            overridden = (o, .now)
            return o
        }) else { return }
        endExecution(reason: "a person used the keyboard or mouse")
        log.info("execution \(stoppedExecution.prefix(8)) stopped: a person used the keyboard or mouse")
    }

    func gatewayConnected(_ link: GatewayLink) async { endExecution(reason: "new gateway session") }
    func gatewayDisconnected() async { endExecution(reason: "gateway disconnected") }
    func shutdown() async {
        lock.withLock { watcher?.stop(); watcher = nil }
        endExecution(reason: "shutdown")
    }

    /// Releases everything held and forgets the owner.
    private func endExecution(reason: String) {
        let (wasOwner, held) = lock.withLock { () -> (String?, (any ComputerInput)?) in
            defer { owner = nil }
            // Before taking the input's lock, which a running hold_key has.
            interrupt.cancel()
            interrupt = CancelFlag()
            return (owner, input)
        }
        guard let held else { return }
        held.lock.withLock { held.releaseAll() }
        if let wasOwner { log.info("execution \(wasOwner.prefix(8)) ended (\(reason)); released every key and button") }
    }

    private func connection() throws(NodeError) -> any ComputerInput {
        try lock.withLock { () throws(NodeError) -> any ComputerInput in
            if let input { return input }
            let opened = try openInput()
            input = opened
            return opened
        }
    }

    // MARK: computer.act

    func act(_ p: ComputerActParams, _ ctx: InvocationContext) async throws(NodeError) -> JSONValue {
        let raw = p.action ?? ""
        guard let action = ComputerAction(rawValue: raw) else {
            throw NodeError(ComputerError.unsupportedAction, "action \"\(raw)\" is not supported by this node; it takes the v1 actions " +
                            ComputerAction.allCases.map(\.rawValue).filter { !$0.hasPrefix("__") }.joined(separator: ", "))
        }
        if action == .closeExecution {
            if lock.withLock({ owner == p.executionId }) { endExecution(reason: p.reason ?? "closed") }
            return ["ok": true]
        }
        try lock.withLock { () throws(NodeError) in
            if let o = overridden, o.execution == p.executionId {
                if let seen = SnapshotLedger.shared.lastSnapshot(executionId: o.execution), seen > o.at {
                    overridden = nil
                } else {
                    throw NodeError(ComputerError.userOverride, "a person used the keyboard or mouse during this execution; " +
                                    "take a new screenshot to go on")
                }
            }
            if let mine = p.executionId {
                if let other = owner, other != mine {
                    throw NodeError(ComputerError.hostBusy, "execution \(other) has the computer until it ends (__close_execution)")
                }
                owner = mine
            } else if let other = owner {
                throw NodeError(ComputerError.hostBusy, "execution \(other) has the computer until it ends (__close_execution)")
            }
        }
        let input = try connection()
        let plan = try ComputerActPlan(p, action: action)
        let log = self.log
        let interrupt = lock.withLock { self.interrupt }
        let result: Result<String, NodeError> = await BlockingExecutor.run("computer-act") { (cancelled: CancelFlag) -> Result<String, NodeError> in
            input.lock.withLock { () -> Result<String, NodeError> in
                do throws(NodeError) { return .success(try plan.perform(on: input, stop: .either(cancelled, interrupt))) }
                catch { return .failure(error) }
            }
        }
        switch result {
        case .success(let what):
            log.info("computer.act \(raw)\(what.isEmpty ? "" : " " + what)\(p.executionId.map { " (execution \($0.prefix(8)))" } ?? "")")
            return ["ok": true]
        case .failure(let e):
            log.info("computer.act \(raw) refused: \(e.message)")
            throw e
        }
    }

    // MARK: device.apps

    /// The desktop's applications from its XDG desktop entries, labelled in the node's locale.
    func apps(_ p: DeviceAppsParams, _ ctx: InvocationContext) async throws(NodeError) -> JSONValue {
        Self.apps(p, env: ProcessInfo.processInfo.environment)
    }

    static func apps(_ p: DeviceAppsParams, env: [String: String]) -> JSONValue {
        let locale = [env["LC_ALL"], env["LC_MESSAGES"], env["LANG"]].compactMap { $0 }.first { !$0.isEmpty }
        let query = p.query?.trimmed().lowercased() ?? ""
        let matched = DesktopEntries.load(env, locale: locale).filter { e in
            (p.includeSystem == true || !e.system)
                && (query.isEmpty || e.label.lowercased().contains(query) || e.id.lowercased().contains(query))
        }
        let limit = p.limit ?? 100
        let apps = matched.prefix(limit).map { e -> JSONValue in
            ["label": .string(e.label), "bundleId": .string(e.id), "path": .string(e.path), "system": .bool(e.system)]
        }
        return ["count": .number(Double(apps.count)), "totalMatched": .number(Double(matched.count)),
                "truncated": .bool(matched.count > limit), "apps": .array(Array(apps))]
    }

    func launch(_ p: DeviceAppsLaunchParams, _ ctx: InvocationContext) async throws(NodeError) -> JSONValue {
        let result = try AppLauncher.launch(p, env: ProcessInfo.processInfo.environment)
        log.info("device.apps.launch \(p.appId ?? "?"): pid \(result["pid"]?.intValue ?? 0)")
        return result
    }
}
