import Config
import Discovery
import GatewaySession
import Kit
import Registry
import Store
import Support

/// Starts the daemon's gateway session from a config: the configured URL (or setup code) at once,
/// else discovery first and the chosen gateway after. `connect` again (a reload with new gateway
/// settings) ends the previous session or search and starts over with the new settings; events
/// held for the gateway stay held for the next session.
///
/// Next to the node session it keeps the operator session (same gateway, same device key) while a
/// capability wants one (`Capability.operatorSessionUse`): `refreshOperator` after every change
/// that can alter that (start, reload, a setup code's operator token arriving).
actor GatewayConnector {
    private let runtime: NodeRuntime
    private let identity: DeviceIdentity
    private let deviceInfo: JSONValue
    private let status: GatewayStatus
    private let handle: GatewayHandle
    let operatorStatus = GatewayStatus(.idle("not used"))
    let operatorHandle = GatewayHandle()
    private let log: Logger
    private var finder: GatewayFinder?
    private var discovery: Task<Void, Never>?
    /// The settings the node session uses (URL chosen, discovery's TLS hint): the operator
    /// session uses the same.
    private var chosen: (config: NodeConfig, tlsHint: String?)?
    private var operatorRunning = false
    /// Bumped by every `connect`: a refresh that started for an earlier gateway gives up.
    private var generation = 0

    init(runtime: NodeRuntime, identity: DeviceIdentity, deviceInfo: JSONValue, status: GatewayStatus,
         handle: GatewayHandle, log: Logger) {
        self.runtime = runtime
        self.identity = identity
        self.deviceInfo = deviceInfo
        self.status = status
        self.handle = handle
        self.log = log
    }

    func connect(_ config: NodeConfig) async {
        generation += 1
        chosen = nil
        await stopSearch()
        await handle.stopClient()
        await stopOperator()
        var config = config
        // A setup code from provisioning (the boot partition), until its session is up.
        if config.gateway.setupCode == nil, let provisioned = ProvisionedSetupCode.read(stateDir: config.stateDir) {
            log.info("using the setup code this node was provisioned with (\(ProvisionedSetupCode.path(stateDir: config.stateDir)))")
            config.gateway.setupCode = provisioned
            // Its gateway stays known after the code is spent, as after `openclaw-node pair`.
            if let code = try? SetupCode(decoding: provisioned) { try? PairingLink.remember(code, store: runtime.store) }
        }
        if config.gateway.url != nil || config.gateway.setupCode != nil {
            var c = config
            var code: SetupCode?
            if let text = config.gateway.setupCode, case .joinURL? = try? SetupCode.form(of: text) {
                // A join URL answers once: fetch it now, keep what it said, and after a restart
                // use the gateway it named with the device token it led to.
                do {
                    code = try await PairingLink.resolve(text)
                    try? PairingLink.remember(code!, store: runtime.store)
                    log.info("gateway.setupCode: fetched the join URL's setup payload for \(code!.url)")
                } catch {
                    c.gateway.setupCode = nil
                    if c.gateway.url == nil, let url = PairingLink.rememberedURL(runtime.store) {
                        log.info("gateway.setupCode: \(error); using the gateway it named before (\(url))")
                        c.gateway.url = url
                    } else {
                        log.warn("gateway.setupCode: \(error); serving only the local control socket")
                        await status.set(.idle("gateway.setupCode: \(error)"))
                        return
                    }
                }
            }
            do { try await start(c, tlsHint: nil, setupCode: code) } catch {
                log.warn("\(error); serving only the local control socket")
                await status.set(.idle("\(error)"))
            }
        } else if let url = PairingLink.rememberedURL(runtime.store) {
            // `openclaw-node pair` named the gateway.
            var c = config
            c.gateway.url = url
            log.info("using the gateway `openclaw-node pair` stored: \(url)")
            do { try await start(c, tlsHint: nil) } catch {
                log.warn("\(error); serving only the local control socket")
                await status.set(.idle("\(error)"))
            }
        } else if config.gateway.lanDiscovery || config.gateway.wideAreaDomain != nil {
            let finder = GatewayFinder(config: config.gateway, store: runtime.store, status: status)
            self.finder = finder
            discovery = Task { await self.useDiscovered(finder, config: config) }
        } else {
            let why = "no gateway: set gateway.url (or OPENCLAW_GATEWAY_URL), or turn on discovery (gateway.discovery.lan, gateway.discovery.wideAreaDomain)"
            log.warn("\(why); serving only the local control socket")
            await status.set(.idle(why))
        }
    }

    /// Ends the search and the sessions (daemon stopping).
    func stop() async {
        await stopSearch()
        await handle.stop()
        await operatorHandle.stop()
    }

    /// Resumes the sessions whose reconnect is paused (SIGHUP, `openclaw-node reconnect`) and cuts
    /// backoff waits short; returns the roles that were paused.
    func resumePaused(_ why: String) async -> [String] {
        var resumed: [String] = []
        if await handle.resume(why) { resumed.append("node") }
        if operatorRunning, await operatorHandle.resume(why) { resumed.append("operator") }
        return resumed
    }

    /// A pairing decision one session heard: every session of this device may be waiting for it
    /// (the operator session's role upgrade is resolved while the node session is connected).
    func pairResolved(_ payload: JSONValue) async {
        await handle.pairResolved(payload)
        await operatorHandle.pairResolved(payload)
    }

    private func start(_ config: NodeConfig, tlsHint: String?, setupCode: SetupCode? = nil) async throws(GatewayClient.ConfigError) {
        let c = try client(config, tlsHint: tlsHint, setupCode: setupCode)
        await c.setOnPairResolved { [weak self] p in Task { await self?.pairResolved(p) } }
        // The operator session never uses the bootstrap token: give it the URL, not the link.
        var plain = config
        if let setupCode { plain.gateway.url = plain.gateway.url ?? setupCode.url; plain.gateway.setupCode = nil }
        chosen = (plain, tlsHint)
        await handle.start(c)
        await refreshOperator()
    }

    /// Starts or stops the operator session to match what the advertised capabilities want now.
    func refreshOperator() async {
        let gen = generation
        let use = runtime.registry.entries.filter(\.advertised).compactMap(\.capability.sessionAware).map(\.operatorSessionUse).max() ?? .none
        var wanted = use == .always
        var tokenScopes: [String]?
        if let key = await handle.current?.gatewayKey, let held = try? runtime.store.deviceToken(gateway: key, role: "operator") {
            tokenScopes = held.scopes
        }
        if use == .whenTokenHeld { wanted = tokenScopes != nil }
        // A connect() ran meanwhile: it refreshes again for its own gateway.
        guard gen == generation, let chosen else { return }
        if wanted == operatorRunning { return }
        if !wanted {
            log.info("no capability needs the operator session any more; closing it")
            await stopOperator()
            return
        }
        do {
            let c = try GatewayClient(config: chosen.config, store: runtime.store, identity: identity, dispatcher: runtime.dispatcher,
                                      deviceInfo: deviceInfo, status: operatorStatus, tlsHint: chosen.tlsHint, session: .operator(tokenScopes: tokenScopes),
                                      onlyWithToken: use == .whenTokenHeld)
            await c.setOnPairResolved { [weak self] p in Task { await self?.pairResolved(p) } }
            operatorRunning = true
            if await !operatorHandle.start(c) {
                if gen == generation { operatorRunning = false }
                return
            }
            // A connect() ran while this one started: stop it, and only it (not a newer session).
            if gen != generation, await operatorHandle.stopClient(ifCurrent: c) { operatorRunning = false }
        } catch {
            log.warn("cannot start the operator session: \(error)")
        }
    }

    /// A network change or a resume reaches both sessions.
    func networkChanged() async {
        await handle.networkChanged()
        await operatorHandle.networkChanged()
    }

    func systemResumed() async {
        await handle.systemResumed()
        await operatorHandle.systemResumed()
    }

    private func stopOperator() async {
        guard operatorRunning else { return }
        operatorRunning = false
        await operatorHandle.stopClient()
        await operatorStatus.set(.idle("not used"))
    }

    private func stopSearch() async {
        finder?.stop()
        await discovery?.value
        finder = nil
        discovery = nil
    }

    private func client(_ c: NodeConfig, tlsHint: String?, setupCode: SetupCode? = nil) throws(GatewayClient.ConfigError) -> GatewayClient {
        try GatewayClient(config: c, store: runtime.store, identity: identity, dispatcher: runtime.dispatcher,
                          deviceInfo: deviceInfo, status: status, tlsHint: tlsHint, setupCode: setupCode)
    }

    private func useDiscovered(_ finder: GatewayFinder, config: NodeConfig) async {
        guard let chosen = await finder.find() else { return }
        guard let url = GatewaySelection.connectURL(for: chosen, configuredPin: config.gateway.tlsFingerprint,
                                                    store: runtime.store, log: log) else {
            let why = "the chosen gateway \"\(chosen.displayName)\" has no usable address (SRV target \(chosen.host), no A/AAAA record); set gateway.url"
            log.error(why)
            await status.set(.idle(why))
            return
        }
        var c = config
        c.gateway.url = url.absoluteString
        do { try await start(c, tlsHint: chosen.tlsFingerprintHint) } catch {
            log.error("cannot use the discovered gateway: \(error)")
            await status.set(.idle("\(error)"))
        }
    }
}
