import CMalloc
import Config
import ControlSocket
import DeviceInfo
import GatewaySession
import Glibc
import HostPresence
import Kit
import Metrics
import Registry
import Skills
import Store
import Support

/// The daemon, assembled in one place: opens state, loads and starts the capabilities, connects to
/// the gateway (configured or discovered), serves the control socket, watches presence, network and
/// sleep, and stops cleanly on SIGTERM/SIGINT. `openclaw-node run` is its only caller.
public enum Daemon {
    /// `makeCapabilities` builds the capability list for a config: once at start, again on each
    /// reload (SIGHUP).
    /// How `run` ended: stopped (SIGTERM/SIGINT), or stopped to start again (a graceful restart:
    /// the caller executes the program anew).
    public enum Outcome: Sendable { case stopped, restart }

    @discardableResult
    public static func run(config: NodeConfig, capabilities makeCapabilities: @escaping NodeRuntime.CapabilityFactory) async throws -> Outcome {
        // One malloc arena per core: the daemon's blocking work runs on short-lived threads, and
        // with glibc's default (8 per core) the memory a large result freed stayed behind in each
        // new arena: measured +7 MiB RSS per 100 MB system.run, without bound; with 2, flat.
        _ = cmalloc_limit_arenas(Int32(max(2, sysconf(Int32(_SC_NPROCESSORS_ONLN)))))
        // The default actions of these signals end the process: take them over before anything
        // can send one (a SIGTERM during start-up then stops the node cleanly once it is up).
        let stopSignal = SignalLatch([SIGTERM, SIGINT])
        let reloads = SignalWaiter.stream(for: SIGHUP)
        let log = Logger(component: "node")
        let presence = NodeRuntime.presenceMonitor(config)
        let runtime = try await NodeRuntime(config: config, capabilities: try makeCapabilities(config, presence), daemon: true,
                                            presence: presence)
        let identity = try runtime.store.identity()
        log.info("openclaw-node \(NodeVersion.version) starting: device \(identity.deviceId), state \(runtime.store.path)")
        if let f = config.sourceFile {
            let dropIns = ConfigDropIns.files(for: f)
            log.info("config \(f)\(dropIns.isEmpty ? "" : " with drop-ins \(dropIns.joined(separator: ", "))")")
        } else { log.info("no config file; using defaults") }
        logManifest(runtime.registry, log: log)

        await runtime.presence.startPolling()
        // A kiosk: the lock for as long as the node runs (released as the daemon ends).
        let alwaysAwake = config.presence.keepAwake ? KeepAwakeKeeper.shared.hold("presence.keepAwake") : nil
        defer { alwaysAwake?.release() }
        let started = ContinuousClock.now
        let startedAtMs = WallClock.milliseconds
        let gatewayStatus = GatewayStatus()
        let gateway = GatewayHandle()
        let session = SessionLink()
        // What the session hooks and the event forwarders below start: stopped with the daemon.
        let hooks = OwnedTasks()
        // Every hook below reads the command table in force, so capabilities a reload starts take
        // part and the ones it stops do not.
        let advertised = { @Sendable in runtime.registry.entries.filter(\.advertised).map(\.capability) }
        // A session's end: capabilities let go of what only made sense with it (held input).
        await gateway.setOnDisconnect {
            hooks.start { await session.set(nil); for c in advertised() { await c.sessionAware?.gatewayDisconnected() } }
        }
        // Presence reaches the capabilities that act on their own (voice wake listens only in the foreground).
        let presenceWatch = Task {
            let first = await runtime.presence.refresh().presence == .foreground
            for c in advertised() { await c.presenceAware?.presenceChanged(foreground: first) }
            for await s in await runtime.presence.transitions() {
                for c in advertised() { await c.presenceAware?.presenceChanged(foreground: s.presence == .foreground) }
            }
        }
        defer { presenceWatch.cancel() }
        // Gateway events, from the node session and the operator session alike, go to the
        // capabilities that asked for them by name (chat, voicewake.changed).
        let eventQueues = GatewayEventQueues { name in advertised().first { $0.manifest.name == name }?.sessionAware }
        defer { eventQueues.finish() }
        let routeEvent: @Sendable (String, JSONValue?) -> Void = { name, payload in
            let targets = advertised().compactMap(\.sessionAware).filter { $0.gatewayEvents.contains(name) }.map(\.manifest.name)
            guard !targets.isEmpty else { return }
            eventQueues.deliver(name, payload ?? .null, to: targets)
        }
        await gateway.setOnEvent(routeEvent)
        let info = (try? JSONValue.from(DeviceCapability(storagePath: config.stateDir).infoPayload())) ?? [:]
        let connector = GatewayConnector(runtime: runtime, identity: identity, deviceInfo: info,
                                         status: gatewayStatus, handle: gateway, log: log)
        let operatorHandle = connector.operatorHandle, operatorStatus = connector.operatorStatus
        await operatorHandle.setOnEvent(routeEvent)
        let operatorSession = OperatorSession(isConnected: { await operatorStatus.isConnected }) { method, params, timeout in
            await operatorHandle.call(method, params: params, timeout: timeout)
                .mapError { GatewayCallError(code: $0.code, message: $0.message, details: $0.details) }
        }
        await gateway.setOnReady { hello in
            let link = GatewayLink(canvasHostUrl: hello.canvasHostUrl, pluginSurfaceUrls: hello.pluginSurfaceUrls,
                                   mainSessionKey: hello.mainSessionKey, nodeId: identity.deviceId,
                                   displayName: config.displayName, isConnected: { await gatewayStatus.isConnected },
                                   request: { method, params in await gateway.request(method, params: params) },
                                   call: { method, params, timeout in
                                       await gateway.call(method, params: params, timeout: timeout)
                                           .mapError { GatewayCallError(code: $0.code, message: $0.message, details: $0.details) }
                                   },
                                   operatorSession: operatorSession,
                                   openStream: { await gateway.openStream($0) }) { event, payload in
                await gateway.sendEventNow(event, payload: payload)
            }
            if ProvisionedSetupCode.spent(stateDir: config.stateDir) { log.info("paired: the provisioned setup code is spent and removed") }
            hooks.start {
                await session.set(link)
                for c in advertised() { await c.sessionAware?.gatewayConnected(link) }
                await connector.refreshOperator()  // a setup code may just have handed over an operator token
            }
        }
        // Listening for network changes and resume before the first connect: one that comes while
        // the node connects is not missed (SleepMonitor's match is in place when it returns, so
        // the gateway seeing the node means a resume from then on reaches it).
        let network = NetworkChangeMonitor { Task { await connector.networkChanged() } }
        let sleep = SleepMonitor { Task { await connector.systemResumed() } }
        if sleep == nil { log.debug("no system bus: resume-from-suspend detection is off") }
        await connector.connect(config)
        // `openclaw-node reconnect`: a paused reconnect starts again at once.
        // The config in force (SIGHUP may replace it), for a fresh session after `openclaw-node pair`.
        let inForce = Locked(config)
        let reconnect: @Sendable (Bool) async -> JSONValue = { fresh in
            if fresh {
                log.info("a new pairing was stored (openclaw-node pair); starting a new gateway session")
                await connector.connect(inForce.withLock { $0 })
                return ["resumed": [], "fresh": true, "connection": .string(await gatewayStatus.text)]
            }
            let resumed = await connector.resumePaused("openclaw-node reconnect")
            return ["resumed": .array(resumed.map { .string($0) }), "connection": .string(await gatewayStatus.text)]
        }
        let restart = GracefulRestart()
        // What runs outside invokes, that a restart waits for (a talk conversation, a held capture).
        let activities: @Sendable () async -> [String] = {
            var out: [String] = []
            for c in advertised() { if let a = await c.reportsActivity?.activity() { out.append(a) } }
            return out
        }
        let restartRequest: @Sendable (JSONValue) async -> JSONValue = { req in
            let wait = Duration.seconds(max(0, min(86_400, req["maxWaitSeconds"]?.intValue ?? 3600)))
            restart.request(reason: req["reason"]?.stringValue ?? "openclaw-node restart", maxWait: wait)
            await restart.refresh(dispatcher: runtime.dispatcher, busy: activities)
            return restart.status
        }
        let server = ControlServer(path: runtime.controlSocketPath, dispatcher: runtime.dispatcher, presence: runtime.presence,
                                   presenceMode: runtime.config.presence.mode, reconnect: reconnect, restart: restartRequest) {
            let p = await runtime.presence.refresh()
            var lines: [String: JSONValue] = [:]
            for c in advertised() { if let r = c.reportsStatus { lines[c.manifest.name] = .string(await r.statusLine()) } }
            return ["running": true, "capabilityStatus": .object(lines), "pid": .number(Double(getpid())), "presence": .string(p.presence.rawValue),
                    "presenceReason": .string(p.reason), "presenceMode": .string(config.presence.mode.rawValue),
                    "uptimeSeconds": .number(Double((ContinuousClock.now - started).components.seconds)),
                    "inFlight": .number(Double(await runtime.dispatcher.inFlightCount)),
                    "connection": .string(await gatewayStatus.text),
                    "gateway": await gatewayStatus.json,
                    "operatorGateway": await connector.operatorStatus.json,
                    "connected": .bool(await gatewayStatus.isConnected),
                    "skillsPublished": NodeSkills.shared.publishedCount.map { .number(Double($0)) } ?? .null,
                    "keepAwake": Self.keepAwakeStatus(KeepAwakeKeeper.shared.status, desktop: KeepAwakeKeeper.shared.holdsDesktopInhibitor),
                    "version": .string(NodeVersion.version),
                    "startedAtMs": .number(Double(startedAtMs)),
                    "restartPending": restart.status,
                    "operatorConnection": .string(await connector.operatorStatus.text)]
        }
        try server.start()
        let stateDir = config.stateDir
        let metrics = MetricsService.start(config.metrics, metrics: NodeMetrics(dispatcher: runtime.dispatcher, gateway: gatewayStatus,
                                                                              presence: runtime.presence, extra: { UpdateCheck.metrics(stateDir: stateDir) }),
                                           log: Logger(component: "metrics"))
        // systemd (Type=notify): ready once the control socket serves; then what the node is doing.
        let service = ServiceManager()
        let statusLine: @Sendable () async -> String = {
            let m = runtime.registry.manifest
            return "\(await gatewayStatus.text); serving \(m.caps.joined(separator: ", ")) (\(m.commands.count) commands)"
        }
        service.notify("READY=1\nSTATUS=\(await statusLine())")
        let supervisor = service.supervise(status: statusLine, alive: { _ = await runtime.dispatcher.inFlightCount })
        if let p = service.watchdogPeriod { log.info("systemd watchdog: alive every \(p)") }
        // Capability events (location.update, …) go to the gateway; while offline the latest of
        // each kind is held and sent after the next connect.
        for entry in runtime.registry.entries where entry.advertised { await forwardEvents(entry.capability, to: gateway, tasks: hooks, log: log) }

        // Capabilities a reload or a probe started: told the presence and the gateway session, and
        // their events forwarded, as those running since start-up were.
        let joined: @Sendable (ReloadOutcome) async -> Void = { outcome in
            for name in outcome.started + outcome.restarted {
                guard let c = runtime.registry.entry(forCapability: name)?.capability else { continue }
                await c.presenceAware?.presenceChanged(foreground: await runtime.presence.current == .foreground)
                if let link = await session.link { await c.sessionAware?.gatewayConnected(link) }
                await forwardEvents(c, to: gateway, tasks: hooks, log: log)
            }
        }
        let changes = RegistryChanges()
        // A capability that could not serve is probed again: 30 s after start and less often
        // after that, and at once when an invoke asks for it. A desktop that started after the node
        // (a user unit at boot), a camera plugged in later: used without a restart.
        let probe: @Sendable ([String]?) async -> ReloadOutcome = { only in
            await changes.run {
                let outcome = await runtime.probeAgain(only)
                guard !outcome.started.isEmpty else { return outcome }
                log.info("can serve now (probed again): \(outcome.started.joined(separator: ", "))")
                await joined(outcome)
                if outcome.manifestChanged {
                    logManifest(runtime.registry, log: log)
                    await gateway.reannounce()
                }
                return outcome
            }
        }
        // An invoke that finds its capability unavailable has it probed at once, whatever the
        // schedule below: somebody wants it now (the gate above runs probes one at a time).
        await runtime.dispatcher.setProbeAgain { name in await probe([name]).started.contains(name) }
        // Each capability that still cannot serve waits twice as long for its next probe, up to
        // 30 min: a probe may cost (on a Raspberry Pi with no camera attached, the camera's runs
        // rpicam-hello, half a second of CPU), so what comes soon after start is found soon and
        // what never comes costs next to nothing. OPENCLAW_NODE_PROBE_SECONDS replaces the 30 s (tests).
        let tick = Duration.seconds(Int(ProcessEnvironment.current["OPENCLAW_NODE_PROBE_SECONDS"] ?? "").flatMap { $0 > 0 ? $0 : nil } ?? 30)
        let prober = Task {
            var due: [String: (at: ContinuousClock.Instant, wait: Duration)] = [:]
            while !Task.isCancelled {
                try? await Task.sleep(for: tick)
                let now = ContinuousClock.now
                let names = runtime.registry.probeable.filter { name in due[name].map { $0.at <= now } ?? true }
                guard !names.isEmpty, !Task.isCancelled else { continue }
                let started = await probe(names).started
                for name in names where !started.contains(name) {
                    let wait = min((due[name]?.wait ?? tick) * 2, tick * 60)
                    due[name] = (now + wait, wait)
                }
            }
        }
        // SIGHUP: read the config file again and apply it (one reload at a time, in order).
        let reloader = Task {
            var current = config
            for await _ in reloads {
                service.notify("RELOADING=1\nSTATUS=reloading the config")
                let running = current
                let (next, outcome) = await changes.run {
                    await reload(running, runtime: runtime, makeCapabilities: makeCapabilities, log: log)
                }
                if let next, let outcome {
                    await joined(outcome)
                    if !next.sameGatewaySettings(as: current) {
                        log.info("gateway settings changed; starting a new gateway session with them")
                        await connector.connect(next)
                    } else if outcome.manifestChanged {
                        await gateway.reannounce()
                    }
                    await connector.refreshOperator()
                    // Skills: each session's publisher rescans at once and publishes what changed
                    // (from the state directory the node started with: a new one needs a restart).
                    var skills = SkillSources(next)
                    skills.stateSkills = SkillSources(config).stateSkills
                    NodeSkills.shared.configure(skills)
                    current = next
                    inForce.withLock { $0 = next }
                }
                // SIGHUP is also how a person says "try again": a paused reconnect resumes.
                _ = await connector.resumePaused("SIGHUP")
                service.notify("READY=1\nSTATUS=\(await statusLine())")
            }
        }

        // A restart asked for (an update): once nothing runs, the daemon stops as for SIGTERM.
        let restartWatch = Task {
            await restart.watch(dispatcher: runtime.dispatcher, busy: activities, fire: { stopSignal.fire(0) })
        }
        defer { restartWatch.cancel() }
        let signal = await stopSignal.wait()
        log.info(signal == 0 ? "stopping to restart" : "received \(signal == SIGTERM ? "SIGTERM" : "SIGINT"); stopping")
        // A restart is a reload to systemd: the same main process sends READY=1 again once it is up.
        service.notify(signal == 0 ? "RELOADING=1\nSTATUS=restarting (\(restart.status["reason"]?.stringValue ?? "asked for"))" : "STOPPING=1\nSTATUS=stopping")
        // First, so nothing the gateway or a control client started keeps a capability busy.
        await runtime.dispatcher.cancelAll("the node is stopping")
        reloader.cancel()
        prober.cancel()
        await reloader.value  // a reload in progress finishes before the capabilities are stopped
        await prober.value
        supervisor?.cancel()
        network?.stop()
        sleep?.stop()
        await connector.stop()
        server.stop()
        metrics.stop()
        await hooks.cancelAll()
        await runtime.shutdown()
        log.info(signal == 0 ? "stopped; starting again" : "stopped")
        return signal == 0 ? .restart : .stopped
    }

    /// One reload: the new config, checked in full (bundles' own sections too), or nil with the
    /// reason logged and the running config kept.
    static func reload(_ current: NodeConfig, runtime: NodeRuntime, makeCapabilities: NodeRuntime.CapabilityFactory,
                       log: Logger) async -> (NodeConfig?, ReloadOutcome?) {
        guard let path = current.sourceFile else {
            log.warn("SIGHUP: the node was started without a config file; nothing to reload")
            return (nil, nil)
        }
        log.info("SIGHUP: reloading \(ConfigLoader.files(path).joined(separator: ", "))")
        let next: NodeConfig
        let fresh: [any Capability]
        do {
            next = try ConfigLoader.load(path: path)
            // presence.* restarts the node, so the running monitor is still the one in force.
            fresh = try makeCapabilities(next, runtime.presence)
        } catch {
            log.error("config reload failed, keeping the running config:\n\(error.description)")
            return (nil, nil)
        }
        let outcome = await runtime.reload(from: current, to: next, capabilities: fresh)
        log.info("config reloaded: \(outcome.summary)")
        if outcome.manifestChanged { logManifest(runtime.registry, log: log) }
        if !outcome.needsRestart.isEmpty {
            log.warn("changed \(outcome.needsRestart.joined(separator: ", ")): takes effect after a restart (systemctl restart openclaw-node)")
        }
        return (next, outcome)
    }

    static func keepAwakeStatus(_ s: (held: Bool, reasons: [String], failure: String?), desktop: Bool = false) -> JSONValue {
        var o: [String: JSONValue] = ["held": .bool(s.held), "reasons": .array(s.reasons.map { .string($0) })]
        if desktop { o["desktopInhibitor"] = true }
        if let f = s.failure, !s.reasons.isEmpty { o["failure"] = .string(f) }
        return .object(o)
    }

    static func logManifest(_ registry: CommandRegistry, log: Logger) {
        let m = registry.manifest
        log.info("advertising caps [\(m.caps.joined(separator: ", "))], \(m.commands.count) commands")
        for r in registry.notAdvertisedReasons { log.info("not advertised: \(r)") }
        for r in BundleCatalog.current.refusedReasons { log.warn("not advertised: \(r)") }
    }

    /// Sends a capability's events to the gateway until its stream ends (it was stopped), in a
    /// task of `tasks`.
    static func forwardEvents(_ capability: any Capability, to gateway: GatewayHandle, tasks: OwnedTasks, log: Logger) async {
        guard let stream = await capability.eventSource?.events() else { return }
        let name = capability.name
        tasks.start {
            for await e in stream {
                if await !gateway.sendOrHoldEvent(e.event, payload: e.payload) {
                    log.debug("\(name): \(e.event) held until the gateway is connected")
                }
            }
        }
    }
}

/// The gateway session the capabilities last heard of, for capabilities a reload starts while connected.
actor SessionLink {
    private(set) var link: GatewayLink?
    func set(_ l: GatewayLink?) { link = l }
}
