import CXTest
import Config
import DesktopSession
import Glibc
import Kit
import Support
import X11Support

/// computer.act on an X11 desktop through XTest, or on a wlroots Wayland compositor through its
/// virtual pointer and keyboard (docs/PROTOCOL.md §6.5): the agent's clicks, drags,
/// scrolls, typing and key combinations, at coordinates of the screenshot it saw. One execution
/// owns the desktop at a time; its end releases whatever it still holds down.
final class ComputerCapability: Capability, CapabilityLifecycle, GatewaySessionAware, SelfDiagnosing, ReportsBackend, Sendable {
    let manifest: BundleManifest
    let settings: ComputerSettings
    private let log = Logger(component: "computer")
    private struct State {
        /// The display connection, usable only under its own lock (one action at a time).
        var input: Locked<Confined<any ComputerInput>>?
        var owner: String?
        /// An execution a person interrupted, and when; refused until it takes a new screenshot.
        var overridden: (execution: String, at: ContinuousClock.Instant)?
        var watcher: UserInputWatcher?
        /// The RemoteDesktopSessions observer that stops executions when an operator streams this desktop.
        var operatorWatch: UInt64?
        /// Raised by an execution's end (gateway gone, shutdown, a person at the desk): the actions
        /// running then stop waiting, release what they hold and return.
        var interrupt = CancelFlag()
    }
    private let state = Locked(State())

    /// Times the launch handshake's wait for the gateway's permit.
    let clock: any NodeClock

    init(manifest: BundleManifest, settings: ComputerSettings, clock: any NodeClock = SystemClock()) {
        self.manifest = manifest; self.settings = settings; self.clock = clock
        if let socket = settings.waylandDisplay {
            drivenDesktop = RemoteDesktopSessions.desktop(waylandSocket: socket, environment: ProcessEnvironment.current)
        } else {
            drivenDesktop = settings.display.map(RemoteDesktopSessions.desktop(x11Display:))
        }
    }

    var handlers: [CommandHandler] { ComputerCommands.handlers(self) }

    func availability() async -> Availability {
        do { _ = try openInput() } catch { return .unavailable(error.message) }
        return .available
    }

    /// For doctor: which input backend computer.act gets here.
    func diagnose() async -> [Diagnosis] {
        guard let line = await backend() else { return [] }  // availability says why not
        return [Diagnosis(.ok, line)]
    }

    /// For doctor and caps: which input backend serves.
    func backend() async -> String? {
        guard let input = try? openInput() else { return nil }
        let how = settings.backend == .auto ? "backend auto" : "capabilities.computer.backend \"\(settings.backend.rawValue)\""
        return "\(how): input through \(input.backendName)"
    }

    /// The input backend (capabilities.computer.backend). `auto`: the compositor's virtual pointer
    /// and keyboard when a wlroots compositor is configured (capabilities.computer.waylandDisplay,
    /// else $WAYLAND_DISPLAY), else GNOME's RemoteDesktop when the session bus has it (under GNOME,
    /// DISPLAY is Xwayland, which reaches X clients only), else KWin's fake input (KDE Plasma), else
    /// XTest on the X display.
    private func openInput() throws(NodeError) -> any ComputerInput {
        switch settings.backend {
        case .x11: return try XTestInput(name: try x11Display())
        case .wayland:
            guard let socket = settings.waylandDisplay else {
                throw NodeError(ComputerError.unavailable, "capabilities.computer.backend is \"wayland\" but WAYLAND_DISPLAY is unset, " +
                                "capabilities.computer.waylandDisplay is not configured and XDG_RUNTIME_DIR has no wayland-N socket")
            }
            return try WaylandInput(socket: socket)
        case .gnome: return try GnomeInput(bus: try sessionBus())
        case .kde:
            guard let socket = settings.waylandDisplay else {
                throw NodeError(ComputerError.unavailable, "capabilities.computer.backend is \"kde\" but WAYLAND_DISPLAY is unset, " +
                                "capabilities.computer.waylandDisplay is not configured and XDG_RUNTIME_DIR has no wayland-N socket")
            }
            return try KdeInput(socket: socket)
        case .auto:
            var tried: [String] = []
            if let socket = settings.waylandDisplay {
                do throws(NodeError) { return try WaylandInput(socket: socket) } catch { tried.append(error.message) }
            }
            if settings.sessionBus != nil {
                do throws(NodeError) { return try GnomeInput(bus: try sessionBus()) } catch { tried.append(error.message) }
            }
            if let socket = settings.waylandDisplay {
                do throws(NodeError) { return try KdeInput(socket: socket) } catch { tried.append(error.message) }
            }
            if let display = settings.display {
                do throws(NodeError) { return try XTestInput(name: display) } catch { tried.append(error.message) }
            } else {
                tried.append("no X display (DISPLAY is unset and capabilities.computer.display is not configured)")
            }
            throw NodeError(ComputerError.unavailable, "no way to send input here: " + tried.joined(separator: "; "))
        }
    }

    private func x11Display() throws(NodeError) -> String {
        guard let display = settings.display else {
            throw NodeError(ComputerError.unavailable, "no display: DISPLAY is unset and capabilities.computer.display is not configured")
        }
        return display
    }

    private func sessionBus() throws(NodeError) -> SessionBus {
        guard let address = settings.sessionBus else {
            throw NodeError(ComputerError.unavailable, "no session bus: DBUS_SESSION_BUS_ADDRESS is unset and XDG_RUNTIME_DIR has no bus " +
                            "(run the node inside the desktop session, e.g. as a systemd --user service)")
        }
        do throws(SessionBus.Failure) { return try SessionBus(address: address) } catch {
            throw NodeError(ComputerError.unavailable, error.description)
        }
    }

    /// The desktop this node drives, as desktop.stream names it (RemoteDesktopSessions): fixed by
    /// the settings, so named once rather than on every action.
    let drivenDesktop: String?

    /// The daemon watches for a person using the keyboard or mouse (XInput2), and for an operator
    /// opening this desktop in the gateway's viewer (desktop.stream), whose clicks XInput2 cannot
    /// tell from the agent's (both come through XTest).
    func start() async -> Availability {
        if let mine = drivenDesktop {
            let id = RemoteDesktopSessions.shared.observe { [weak self] shown in
                if shown == mine { self?.personAtTheDesk("an operator opened the desktop through desktop.stream") }
            }
            state.withLock { $0.operatorWatch = id }
        }
        // XInput2 is X11's; a Wayland compositor shows no client the input of others.
        guard settings.waylandDisplay == nil, let display = settings.display else { return .available }
        do {
            let w = try UserInputWatcher(display: display) { [weak self] in self?.personAtTheDesk("a person used the keyboard or mouse") }
            state.withLock { $0.watcher = w }
        } catch {
            log.warn("input from a person at the desk will not stop executions: \(error.message)")
        }
        return .available
    }

    /// A person used the keyboard or mouse: they win. The running execution stops and releases
    /// what it holds; its next action is refused until it takes a new screenshot.
    private func personAtTheDesk(_ who: String) {
        guard let stoppedExecution = state.withLock({ s -> String? in
            guard let o = s.owner else { return nil }
            s.overridden = (o, .now)
            return o
        }) else { return }
        endExecution(reason: who)
        log.info("execution \(stoppedExecution.prefix(8)) stopped: \(who)")
    }

    func gatewayConnected(_ link: GatewayLink) async { endExecution(reason: "new gateway session") }
    func gatewayDisconnected() async { endExecution(reason: "gateway disconnected") }
    func shutdown() async {
        let watch = state.withLock { s -> UInt64? in
            s.watcher?.stop(); s.watcher = nil
            defer { s.operatorWatch = nil }
            return s.operatorWatch
        }
        if let watch { RemoteDesktopSessions.shared.removeObserver(watch) }
        endExecution(reason: "shutdown")
    }

    /// Releases everything held and forgets the owner.
    private func endExecution(reason: String) {
        let (wasOwner, held) = state.withLock { s -> (String?, Locked<Confined<any ComputerInput>>?) in
            defer { s.owner = nil }
            // Before taking the input's lock, which a running hold_key has.
            s.interrupt.cancel()
            s.interrupt = CancelFlag()
            return (s.owner, s.input)
        }
        guard let held else { return }
        held.withConfined { $0.releaseAll() }
        if let wasOwner { log.info("execution \(wasOwner.prefix(8)) ended (\(reason)); released every key and button") }
    }

    private func connection() throws(NodeError) -> Locked<Confined<any ComputerInput>> {
        try state.withLock { (s: inout State) throws(NodeError) -> Locked<Confined<any ComputerInput>> in
            if let input = s.input { return input }
            let opened = Locked(Confined<any ComputerInput>(try openInput()))
            s.input = opened
            return opened
        }
    }

    // MARK: computer.act

    func act(_ p: ComputerActParams, _ ctx: InvocationContext) async throws(NodeError) -> ComputerActResult {
        let raw = p.action
        guard let action = ComputerAction(rawValue: raw) else {
            throw NodeError(ComputerError.unsupportedAction, "action \"\(raw)\" is not supported by this node; it takes the v1 actions " +
                            ComputerAction.allCases.map(\.rawValue).filter { !$0.hasPrefix("__") }.joined(separator: ", "))
        }
        if action == .closeExecution {
            if state.withLock({ $0.owner == p.executionId }) { endExecution(reason: p.reason) }
            return ComputerActResult()
        }
        if let mine = drivenDesktop, RemoteDesktopSessions.shared.isShown(mine) {
            throw NodeError(ComputerError.hostBusy, "an operator is using this desktop through desktop.stream; " +
                            "computer control goes on when the stream ends (then take a new screenshot)")
        }
        try state.withLock { (s: inout State) throws(NodeError) in
            if let o = s.overridden, o.execution == p.executionId {
                if let seen = SnapshotLedger.shared.lastSnapshot(executionId: o.execution), seen > o.at {
                    s.overridden = nil
                } else {
                    throw NodeError(ComputerError.userOverride, "a person used the keyboard or mouse during this execution; " +
                                    "take a new screenshot to go on")
                }
            }
            if let mine = p.executionId {
                if let other = s.owner, other != mine {
                    throw NodeError(ComputerError.hostBusy, "execution \(other) has the computer until it ends (__close_execution)")
                }
                s.owner = mine
            } else if let other = s.owner {
                throw NodeError(ComputerError.hostBusy, "execution \(other) has the computer until it ends (__close_execution)")
            }
        }
        let input = try connection()
        let plan = try ComputerActPlan(p, action: action)
        let log = self.log
        let interrupt = state.withLock { $0.interrupt }
        let result: Result<String, NodeError> = await BlockingExecutor.run("computer-act") { (cancelled: CancelFlag) -> Result<String, NodeError> in
            input.withConfined { input -> Result<String, NodeError> in
                do throws(NodeError) { return .success(try plan.perform(on: input, stop: .either(cancelled, interrupt))) }
                catch { return .failure(error) }
            }
        }
        switch result {
        case .success(let what):
            log.info("computer.act \(raw)\(what.isEmpty ? "" : " " + what)\(p.executionId.map { " (execution \($0.prefix(8)))" } ?? "")")
            return ComputerActResult()
        case .failure(let e):
            log.info("computer.act \(raw) refused: \(e.message)")
            throw e
        }
    }

    // MARK: device.apps

    /// The desktop's applications from its XDG desktop entries, labelled in the node's locale.
    func apps(_ p: DeviceAppsParams, _ ctx: InvocationContext) async throws(NodeError) -> DeviceAppsResult {
        Self.apps(p, env: ProcessEnvironment.current)
    }

    static func apps(_ p: DeviceAppsParams, env: [String: String]) -> DeviceAppsResult {
        let locale = [env["LC_ALL"], env["LC_MESSAGES"], env["LANG"]].compactMap { $0 }.first { !$0.isEmpty }
        let inventory = DesktopEntries.load(env, locale: locale)
        func row(_ e: DesktopEntry, executable: Bool) -> DeviceAppsResult.App {
            DeviceAppsResult.App(appId: e.appId, appRevision: e.appRevision, label: e.label, path: e.path, system: e.system,
                                 executable: executable ? e.executable : nil)
        }
        if let appId = p.appId {
            let found = inventory.entries.filter { $0.appId == appId }.prefix(1).map { row($0, executable: true) }
            return DeviceAppsResult(count: found.count, totalMatched: found.count, truncated: false,
                                    inventoryComplete: inventory.complete, apps: Array(found))
        }
        let query = p.normalizedQuery
        let matched = inventory.entries.filter { e in
            (p.includeSystem || !e.system) && (query.isEmpty || e.label.lowercased().contains(query) || e.appId.lowercased().contains(query))
        }
        let limit = p.limit
        return DeviceAppsResult(count: min(limit, matched.count), totalMatched: matched.count, truncated: matched.count > limit,
                                inventoryComplete: inventory.complete, apps: matched.prefix(limit).map { row($0, executable: false) })
    }

    func launch(_ p: DeviceAppsLaunchParams, _ ctx: InvocationContext) async throws(NodeError) -> DeviceAppsLaunchResult {
        let result = try await AppLauncher.launch(p, env: ProcessEnvironment.current, duplex: ctx.duplex, clock: clock)
        log.info("device.apps.launch \(p.id): pid \(result.pid)")
        return result
    }
}
