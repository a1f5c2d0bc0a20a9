import Config
import Kit
import Support

/// The `location` capability: location.get from gpsd's JSON protocol (no libgps), plus optional
/// significant-change updates.
///
/// Once the registry finds it enabled (`availability()`), it keeps one background `?WATCH`
/// connection to gpsd so the latest fix is always cached, and reconnects when gpsd restarts.
/// gpsd being down is a runtime error (LOCATION_UNAVAILABLE, logged), not a reason to hide the
/// command: gpsd is often socket-activated or started after the node. Location is not
/// foreground-only (as on iOS with "Always"): a headless tracker must answer too.
///
/// Significant changes: with `capabilities.location.significantChangeMeters` > 0,
/// `significantChanges()` yields a `LocationUpdate` for the first fix and for every move larger
/// than that distance, at most one per `significantChangeMinIntervalMs` (default 60000). The
/// gateway session sends each as node event `location.update` with `update.payload`.
public final class LocationCapability: Capability, CapabilityLifecycle, EventSource, SelfDiagnosing {
    public let manifest: BundleManifest
    public let settings: LocationSettings
    /// nil when `capabilities.location.gpsd` is not an address (the capability is then unavailable).
    let client: GpsdClient?
    let monitor: SignificantChangeMonitor
    private let log: Logger

    public convenience init(manifest: BundleManifest, settings: LocationSettings, log: Logger = Logger(component: "location")) {
        self.init(manifest: manifest, settings: settings, timing: .init(), log: log)
    }

    init(manifest: BundleManifest, settings: LocationSettings, timing: GpsdWatcher.Timing, log: Logger = Logger(component: "location")) {
        self.manifest = manifest
        self.settings = settings
        self.log = log
        client = settings.endpoint.map { GpsdClient(endpoint: $0, timing: timing, log: log) }
        monitor = SignificantChangeMonitor(thresholdMeters: settings.significantChangeMeters,
                                           minInterval: settings.significantChangeMinInterval, log: log)
    }

    public var handlers: [CommandHandler] { LocationCommands.handlers(self) }

    /// A valid gpsd address is all it takes: gpsd may come and go, and location.get says so.
    public func availability() async -> Availability {
        guard client != nil else {
            let e = LocationErrors.badEndpoint(settings.endpointText)
            log.warn(e.message)
            return .unavailable(e.message)
        }
        return .available
    }

    /// The daemon watches gpsd from its start (cached fixes, location.update events).
    public func start() async -> Availability {
        guard let client else { return await availability() }
        await client.start()
        await monitor.start(client)
        log.info("watching gpsd at \(client.endpoint)" +
                 (settings.significantChangeMeters > 0 ? "; location.update after moves > \(Int(settings.significantChangeMeters)) m" : ""))
        return .available
    }

    /// Whether gpsd answers at the configured address (one TCP connect, closed at once).
    public func diagnose() async -> [Diagnosis] {
        guard let endpoint = settings.endpoint else { return [] }  // availability() already said why
        if let addrs = try? TCPSocket.resolve(host: endpoint.host, port: endpoint.port),
           let tcp = try? TCPSocket.connect(addrs, timeout: .seconds(2)) {
            tcp.close()
            return [Diagnosis(.ok, "gpsd answers at \(endpoint)")]
        }
        return [Diagnosis(.fail, "gpsd is not reachable at \(endpoint) (sudo systemctl start gpsd, or set capabilities.location.gpsd)")]
    }

    func get(_ p: LocationGetParams, _ context: InvocationContext) async throws(NodeError) -> LocationGetResult {
        guard let client else { throw LocationErrors.badEndpoint(settings.endpointText) }
        // start() did this in the daemon; a one-shot invoke starts the watch for this one call.
        await client.start()
        await monitor.start(client)
        let fix = try await LocationLocator(client: client).locate(p, deadline: context.deadline)
        return LocationPayload.result(fix, accuracy: p.accuracy)
    }

    /// Significant-change updates (see the type's comment). Each call is a new subscription; the
    /// stream ends at `shutdown()`, and at once when significantChangeMeters is 0.
    public func significantChanges() async -> AsyncStream<LocationUpdate> {
        guard await monitor.isEnabled else { return AsyncStream { $0.finish() } }
        return await monitor.subscribe()
    }

    /// `location.update` node events for the gateway (nil when significant changes are off).
    public func events() async -> AsyncStream<CapabilityEvent>? {
        guard await monitor.isEnabled else { return nil }
        let updates = await significantChanges()
        return AsyncStream { c in
            let t = Task {
                for await u in updates { c.yield(CapabilityEvent(u.event, payload: u.payload)) }
                c.finish()
            }
            c.onTermination = { _ in t.cancel() }
        }
    }

    public func shutdown() async {
        await monitor.stop()
        await client?.stop()
    }
}
