import CMalloc
import Config
import FoundationEssentials
import Glibc
import HostPresence
import Kit
import Registry
import Store
import Support

/// The daemon, assembled in one place: opens state, loads and starts the capabilities, connects to
/// the gateway (configured or discovered), serves the control socket, watches presence, network and
/// sleep, and stops cleanly on SIGTERM/SIGINT. `openclaw-node run` is its only caller.
public enum Daemon {
    public static func run(config: NodeConfig, capabilities: [any Capability]) async throws {
        // One malloc arena per core: the daemon's blocking work runs on short-lived threads, and
        // with glibc's default (8 per core) the memory a large result freed stayed behind in each
        // new arena: measured +7 MiB RSS per 100 MB system.run, without bound; with 2, flat.
        _ = cmalloc_limit_arenas(Int32(max(2, sysconf(Int32(_SC_NPROCESSORS_ONLN)))))
        let log = Logger(component: "node")
        let runtime = try await NodeRuntime(config: config, capabilities: capabilities, daemon: true)
        let identity = try runtime.store.identity()
        log.info("openclaw-node \(NodeVersion.version) starting: device \(identity.deviceId), state \(runtime.store.path)")
        if let f = config.sourceFile { log.info("config \(f)") } else { log.info("no config file; using defaults") }
        let m = runtime.registry.manifest
        log.info("advertising caps [\(m.caps.joined(separator: ", "))], \(m.commands.count) commands")
        for r in runtime.registry.notAdvertisedReasons { log.info("not advertised: \(r)") }

        await runtime.presence.startPolling()
        let started = Date()
        let gatewayStatus = GatewayStatus()
        let gateway = GatewayHandle()
        // Each hello-ok tells the capabilities about the session (canvas host URL, session key).
        let advertised = runtime.registry.entries.filter(\.advertised).map(\.capability)
        // A session's end: capabilities let go of what only made sense with it (held input).
        await gateway.setOnDisconnect { Task { for c in advertised { await c.gatewayDisconnected() } } }
        // Presence reaches the capabilities that act on their own (voice wake listens only in the foreground).
        let presenceWatch = Task {
            let first = await runtime.presence.refresh().presence == .foreground
            for c in advertised { await c.presenceChanged(foreground: first) }
            for await s in await runtime.presence.transitions() {
                for c in advertised { await c.presenceChanged(foreground: s.presence == .foreground) }
            }
        }
        defer { presenceWatch.cancel() }
        // Gateway events go to the capabilities that asked for them by name (chat, voicewake.changed).
        var listeners: [String: [any Capability]] = [:]
        for c in advertised { for name in c.gatewayEvents { listeners[name, default: []].append(c) } }
        let byEvent = listeners
        await gateway.setOnEvent { name, payload in
            guard let targets = byEvent[name] else { return }
            Task { for c in targets { await c.gatewayEvent(name, payload ?? .null) } }
        }
        await gateway.setOnReady { hello in
            let link = GatewayLink(canvasHostUrl: hello.canvasHostUrl, pluginSurfaceUrls: hello.pluginSurfaceUrls,
                                   mainSessionKey: hello.mainSessionKey, nodeId: identity.deviceId,
                                   displayName: config.displayName, isConnected: { await gatewayStatus.isConnected },
                                   request: { method, params in await gateway.request(method, params: params) }) { event, payload in
                await gateway.sendEventNow(event, payload: payload)
            }
            Task { for c in advertised { await c.gatewayConnected(link) } }
        }
        let info = DeviceCapability(storagePath: config.stateDir).infoPayload()
        let makeClient = { @Sendable (c: NodeConfig, hint: String?) throws(GatewayClient.ConfigError) -> GatewayClient in
            try GatewayClient(config: c, store: runtime.store, identity: identity, dispatcher: runtime.dispatcher,
                              deviceInfo: info, status: gatewayStatus, tlsHint: hint)
        }
        var finder: GatewayFinder?
        if config.gateway.url != nil || config.gateway.setupCode != nil {
            do { await gateway.start(try makeClient(config, nil)) } catch {
                log.warn("\(error); serving only the local control socket")
                await gatewayStatus.set(.idle("\(error)"))
            }
        } else if config.gateway.lanDiscovery || config.gateway.wideAreaDomain != nil {
            finder = GatewayFinder(config: config.gateway, store: runtime.store, status: gatewayStatus)
        } else {
            let why = "no gateway: set gateway.url (or OPENCLAW_GATEWAY_URL), or turn on discovery (gateway.discovery.lan, gateway.discovery.wideAreaDomain)"
            log.warn("\(why); serving only the local control socket")
            await gatewayStatus.set(.idle(why))
        }
        let server = ControlServer(runtime: runtime) {
            let p = await runtime.presence.refresh()
            return ["running": true, "pid": .number(Double(getpid())), "presence": .string(p.presence.rawValue),
                    "presenceReason": .string(p.reason), "presenceMode": .string(config.presence.mode.rawValue),
                    "uptimeSeconds": .number(Date().timeIntervalSince(started).rounded()),
                    "inFlight": .number(Double(await runtime.dispatcher.inFlightCount)),
                    "connection": .string(await gatewayStatus.text),
                    "connected": .bool(await gatewayStatus.isConnected)]
        }
        try server.start()
        // systemd (Type=notify): ready once the control socket serves; then what the node is doing.
        let service = ServiceManager()
        let statusLine: @Sendable () async -> String = {
            let m = runtime.registry.manifest
            return "\(await gatewayStatus.text); serving \(m.caps.joined(separator: ", ")) (\(m.commands.count) commands)"
        }
        service.notify("READY=1\nSTATUS=\(await statusLine())")
        let supervisor = service.supervise(status: statusLine, alive: { _ = await runtime.dispatcher.inFlightCount })
        if let p = service.watchdogPeriod { log.info("systemd watchdog: alive every \(p)") }
        let discoveryTask = Task { [finder] in
            guard let finder, let chosen = await finder.find() else { return }
            guard let url = GatewaySelection.connectURL(for: chosen, configuredPin: config.gateway.tlsFingerprint,
                                                        store: runtime.store, log: log) else {
                let why = "the chosen gateway \"\(chosen.displayName)\" has no usable address (SRV target \(chosen.host), no A/AAAA record); set gateway.url"
                log.error(why)
                await gatewayStatus.set(.idle(why))
                return
            }
            var c = config
            c.gateway.url = url.absoluteString
            do { await gateway.start(try makeClient(c, chosen.tlsFingerprintHint)) } catch {
                log.error("cannot use the discovered gateway: \(error)")
                await gatewayStatus.set(.idle("\(error)"))
            }
        }
        // Capability events (location.update, …) go to the gateway; while offline the latest of
        // each kind is held and sent after the next connect.
        for entry in runtime.registry.entries where entry.advertised {
            guard let stream = await entry.capability.events() else { continue }
            let name = entry.capability.name
            Task {
                for await e in stream {
                    if await !gateway.sendOrHoldEvent(e.event, payload: e.payload) {
                        log.debug("\(name): \(e.event) held until the gateway is connected")
                    }
                }
            }
        }
        let network = NetworkChangeMonitor { Task { await gateway.networkChanged() } }
        let sleep = SleepMonitor { Task { await gateway.systemResumed() } }
        if sleep == nil { log.debug("no system bus: resume-from-suspend detection is off") }

        let signal = await SignalWaiter.wait(for: [SIGTERM, SIGINT])
        log.info("received \(signal == SIGTERM ? "SIGTERM" : "SIGINT"); stopping")
        service.notify("STOPPING=1\nSTATUS=stopping")
        supervisor?.cancel()
        network?.stop()
        sleep?.stop()
        finder?.stop()
        await discoveryTask.value
        await gateway.stop()
        server.stop()
        await runtime.shutdown()
        log.info("stopped")
    }
}
