import Config
import Glibc
import Kit
import Store
import Support

/// Runs the discovery paths the config enables — LAN (avahi) and wide-area (unicast DNS-SD) — side
/// by side and reports, per path, what it found or why it is off or unavailable. `discover` takes
/// one snapshot; `run` keeps one going until it has picked a gateway.
public final class GatewayDiscovery: Sendable {
    public enum PathState: Sendable, Equatable {
        /// Switched off by config; the text says which key.
        case off(String)
        /// Cannot work here; the text says why and what to do.
        case unavailable(String)
        /// Working on it (browsing, waiting for the daemon, first query outstanding).
        case searching(String)
        /// Has an answer (possibly "none").
        case ready
    }

    public struct PathReport: Sendable {
        public let name: String
        public let state: PathState
        public let gateways: [DiscoveredGateway]
        /// Instances that could not be resolved: shown, not fatal (each gateway has its own notes).
        public let notes: [String]
    }

    public let domain: DNSName?
    private let lanEnabled: Bool
    private let wideArea: WideAreaBrowser?
    private let wideAreaSetupError: String?
    private let lan: AvahiBrowser?
    /// Why LAN discovery could not start (the Avahi client library is missing, …).
    private let lanProblem: String?
    private struct WideArea {
        var result: WideAreaBrowser.Result?
        var running = false
        var rounds = 0
    }
    private let wideAreaState = Locked(WideArea())
    /// The wide-area round in progress, held until it answers; `stop` cancels it.
    private let browsing = OwnedTasks()

    /// `onChange` is called (on some thread) whenever the LAN picture changes.
    public init(config: NodeConfig.Gateway, onChange: @escaping @Sendable () -> Void = {}) {
        lanEnabled = config.lanDiscovery
        var lanProblem: String?
        if config.lanDiscovery {
            do { lan = try AvahiBrowser(onChange: onChange) } catch { lan = nil; lanProblem = error.description }
        } else {
            lan = nil
        }
        self.lanProblem = lanProblem
        var domain: DNSName?
        var setupError: String?
        var browser: WideAreaBrowser?
        if let text = config.wideAreaDomain, !text.isEmpty {
            do {
                let d = try DNSName(text: text)
                domain = d
                let resolver: any DNSQuerying = try config.nameserver.map { try UDPDNSClient(server: $0) } ?? SystemDNSResolver()
                browser = WideAreaBrowser(domain: d, resolver: resolver)
            } catch let e as DNSNameError {
                setupError = "gateway.discovery.wideAreaDomain: \(e.description)"
            } catch {
                setupError = "\(error)"
            }
        }
        self.domain = domain
        wideArea = browser
        wideAreaSetupError = setupError
    }

    deinit { stop() }

    public func start() {
        lan?.start()
        refreshWideArea()
    }

    public func stop() {
        lan?.stop()
        Task { [browsing] in await browsing.cancelAll() }
    }

    /// Starts one wide-area round unless one is running. Its answer replaces the previous one.
    public func refreshWideArea() {
        guard let wideArea else { return }
        let go: Bool = wideAreaState.withLock { w in
            if w.running { return false }
            w.running = true
            return true
        }
        guard go else { return }
        browsing.start { [weak self] in
            let r = await wideArea.browse()
            guard let self else { return }
            self.wideAreaState.update { w in
                w.result = r
                w.running = false
                w.rounds += 1
            }
        }
    }

    public var wideAreaBusy: Bool { wideAreaState.withLock { $0.running } }

    public var lanReport: PathReport {
        guard lanEnabled else { return PathReport(name: "lan", state: .off("gateway.discovery.lan is false"), gateways: [], notes: []) }
        guard let lan else {
            return PathReport(name: "lan", state: .unavailable(lanProblem ?? "LAN discovery could not start"),
                              gateways: [], notes: [])
        }
        let gateways = lan.table.gateways
        let notes = lan.table.failures
        let state: PathState
        switch lan.status {
        case .starting: state = .searching("connecting to avahi-daemon")
        case .browsing: state = lan.table.settled ? .ready : .searching("browsing \(DiscoveredGateway.serviceType) in local.")
        case .daemonNotRunning:
            state = .unavailable("avahi-daemon is not running (the D-Bus system bus is up, but nothing owns org.freedesktop.Avahi); " +
                                 "start it with `systemctl enable --now avahi-daemon` (package avahi-daemon). Waiting for it to appear")
        case .unavailable(let why): state = .unavailable(why)
        case .stopped: state = .off("stopped")
        }
        return PathReport(name: "lan", state: state, gateways: gateways, notes: notes)
    }

    public var wideAreaReport: PathReport {
        if let e = wideAreaSetupError { return PathReport(name: "wideArea", state: .unavailable(e), gateways: [], notes: []) }
        guard let wideArea else {
            return PathReport(name: "wideArea", state: .off("gateway.discovery.wideAreaDomain is not set (nor OPENCLAW_WIDE_AREA_DOMAIN)"),
                              gateways: [], notes: [])
        }
        let (result, rounds) = wideAreaState.withLock { ($0.result, $0.rounds) }
        guard let result, rounds > 0 else {
            return PathReport(name: "wideArea", state: .searching("asking \(wideArea.resolver.label) for PTR \(wideArea.serviceName.text)"),
                              gateways: [], notes: [])
        }
        let notes = result.problems
        if let e = result.error { return PathReport(name: "wideArea", state: .unavailable(e), gateways: [], notes: notes) }
        return PathReport(name: "wideArea", state: .ready, gateways: result.gateways, notes: notes)
    }

    /// Everything found right now, LAN first (a local address beats a tailnet route).
    public var candidates: [DiscoveredGateway] { lanReport.gateways + wideAreaReport.gateways }

    /// Both paths have answered (or cannot): nothing more is expected soon.
    public var settled: Bool {
        [lanReport.state, wideAreaReport.state].allSatisfy { if case .searching = $0 { return false }; return true }
    }

    /// Browses until both paths have answered or `timeout` passes; for `discover`.
    public static func snapshot(config: NodeConfig.Gateway, timeout: Duration) async -> (lan: PathReport, wideArea: PathReport, elapsed: Duration) {
        let start = ContinuousClock.now
        let d = GatewayDiscovery(config: config)
        d.start()
        while !d.settled && ContinuousClock.now - start < timeout {
            try? await Task.sleep(for: .milliseconds(5)) // a one-shot CLI: a short poll beats plumbing
        }
        let result = (d.lanReport, d.wideAreaReport, ContinuousClock.now - start)
        d.stop()
        return result
    }
}
