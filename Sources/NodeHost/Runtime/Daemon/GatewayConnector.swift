import Config
import Kit
import Registry
import Store
import Support

/// Starts the daemon's gateway session from a config: the configured URL (or setup code) at once,
/// else discovery first and the chosen gateway after. `connect` again (a reload with new gateway
/// settings) ends the previous session or search and starts over with the new settings; events
/// held for the gateway stay held for the next session.
actor GatewayConnector {
    private let runtime: NodeRuntime
    private let identity: DeviceIdentity
    private let deviceInfo: JSONValue
    private let status: GatewayStatus
    private let handle: GatewayHandle
    private let log: Logger
    private var finder: GatewayFinder?
    private var discovery: Task<Void, Never>?

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
        await stopSearch()
        await handle.stopClient()
        if config.gateway.url != nil || config.gateway.setupCode != nil {
            do { await handle.start(try client(config, tlsHint: nil)) } catch {
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

    /// Ends the search and the session (daemon stopping).
    func stop() async {
        await stopSearch()
        await handle.stop()
    }

    private func stopSearch() async {
        finder?.stop()
        await discovery?.value
        finder = nil
        discovery = nil
    }

    private func client(_ c: NodeConfig, tlsHint: String?) throws(GatewayClient.ConfigError) -> GatewayClient {
        try GatewayClient(config: c, store: runtime.store, identity: identity, dispatcher: runtime.dispatcher,
                          deviceInfo: deviceInfo, status: status, tlsHint: tlsHint)
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
        do { await handle.start(try client(c, tlsHint: chosen.tlsFingerprintHint)) } catch {
            log.error("cannot use the discovered gateway: \(error)")
            await status.set(.idle("\(error)"))
        }
    }
}
