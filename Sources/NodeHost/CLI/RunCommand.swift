import Foundation

/// `openclaw-node run`: the daemon. Opens state, loads capabilities, serves the control socket,
/// watches presence, and stops cleanly on SIGTERM/SIGINT.
enum RunCommand {
    static let help = """
        Usage: openclaw-node run [--config FILE]

        Runs the node until SIGTERM or SIGINT. Logs go to stderr (journald under systemd);
        OPENCLAW_NODE_LOG=debug for more.
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
        var client: GatewayClient?
        do {
            let info = DeviceCapability(storagePath: config.stateDir).infoPayload()
            client = try GatewayClient(config: config, store: runtime.store, identity: identity,
                                       dispatcher: runtime.dispatcher, deviceInfo: info, status: gatewayStatus)
        } catch {
            log.warn("\(error.description); serving only the local control socket")
            await gatewayStatus.set(.idle(error.description))
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
        let gateway = client
        let gatewayTask = Task { await gateway?.run() }
        // Capability events (location.update, …) go to the gateway; while offline the latest of
        // each kind is held and sent after the next connect.
        for entry in runtime.registry.entries where entry.advertised {
            guard let stream = await entry.capability.events() else { continue }
            let name = entry.capability.name
            Task {
                for await e in stream {
                    if let gateway, await !gateway.sendOrHoldEvent(e.event, payload: e.payload) {
                        log.debug("\(name): \(e.event) held until the gateway is connected")
                    }
                }
            }
        }
        let network = NetworkChangeMonitor { Task { await gateway?.networkChanged() } }
        let sleep = SleepMonitor { Task { await gateway?.systemResumed() } }
        if sleep == nil { log.debug("no system bus: resume-from-suspend detection is off") }

        let signal = await SignalWaiter.wait(for: [SIGTERM, SIGINT])
        log.info("received \(signal == SIGTERM ? "SIGTERM" : "SIGINT"); stopping")
        network?.stop()
        sleep?.stop()
        await gateway?.stop()
        await gatewayTask.value
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
