import Foundation

/// `openclaw-node run`: the daemon. Opens state, loads capabilities, serves the control socket,
/// watches presence, and stops cleanly on SIGTERM/SIGINT.
enum RunCommand {
    static let help = """
        Usage: openclaw-node run [--config FILE]

        Runs the node until SIGTERM or SIGINT. Logs go to stderr (journald under systemd);
        OPENCLAW_NODE_LOG=debug for more.

        Which gateway: gateway.url (or OPENCLAW_GATEWAY_URL, or gateway.setupCode) when set — then
        discovery is skipped. Otherwise the node browses for gateways (LAN via avahi-daemon,
        wide-area DNS-SD when gateway.discovery.wideAreaDomain is set) and connects to the one named
        gateway.name, else the one it chose last time, else the only one found; with several and
        no name it lists them in the log and keeps waiting. `openclaw-node discover` shows the same
        view.
        """

    static func main(_ args: [String], capabilities: CLI.CapabilityFactory) async throws -> Int32 {
        let a = try Arguments(args, valued: ["config"], known: [])
        if a.flag("help") { Out.line(help); return ExitCode.ok.rawValue }
        let config = try CLI.loadConfig(a)
        let log = Logger(component: "node")
        let runtime = try await NodeRuntime(config: config, capabilities: capabilities(config))
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
        for c in advertised { Task { await c.daemonStarted() } }
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
        network?.stop()
        sleep?.stop()
        finder?.stop()
        await discoveryTask.value
        await gateway.stop()
        server.stop()
        await runtime.shutdown()
        log.info("stopped")
        return ExitCode.ok.rawValue
    }
}

/// Suspends until one of the signals arrives (handled on a dispatch queue, not in a signal handler).
enum SignalWaiter {
    static func wait(for signals: [Int32]) async -> Int32 {
        await withCheckedContinuation { (c: CheckedContinuation<Int32, Never>) in
            let once = OnceFlag()
            let queue = DispatchQueue(label: "signals")
            var sources: [DispatchSourceSignal] = []
            for s in signals {
                Glibc.signal(s, SIG_IGN)
                let src = DispatchSource.makeSignalSource(signal: s, queue: queue)
                src.setEventHandler {
                    if once.claim() { c.resume(returning: s) }
                }
                src.resume()
                sources.append(src)
            }
            SignalSources.keep(sources)
        }
    }
}

/// Keeps signal sources alive for the process lifetime.
enum SignalSources {
    nonisolated(unsafe) private static var held: [DispatchSourceSignal] = []
    static func keep(_ s: [DispatchSourceSignal]) { held += s }
}

final class OnceFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var done = false
    func claim() -> Bool { lock.withLock { if done { return false }; done = true; return true } }
}
