import Config
import GatewaySession
import Glibc
import Kit
import Store
import Support

/// `run` without gateway.url: keeps discovery going until `GatewaySelection` picks a gateway, then
/// remembers the choice and stops browsing. Logs each path's trouble once (an absent avahi-daemon
/// is a fact, not news every second) and the candidates whenever the picture changes. It looks
/// four times a second and re-asks wide-area DNS every 30 s: idle between, never a busy loop.
public final class GatewayFinder: Sendable {
    private let config: NodeConfig.Gateway
    private let store: StateStore
    private let status: GatewayStatus
    private let log = Logger(component: "discovery")
    private let stopped = Locked(false)
    /// How long after start "the only gateway found" may be trusted to really be the only one.
    let settleTime: Duration
    let wideAreaInterval: Duration

    public init(config: NodeConfig.Gateway, store: StateStore, status: GatewayStatus,
                settleTime: Duration = .seconds(2), wideAreaInterval: Duration = .seconds(30)) {
        self.config = config; self.store = store; self.status = status
        self.settleTime = settleTime; self.wideAreaInterval = wideAreaInterval
    }

    public func stop() { stopped.withLock { $0 = true } }
    private var isStopped: Bool { stopped.withLock { $0 } }

    /// Returns the chosen gateway, or nil when stopped first.
    public func find() async -> DiscoveredGateway? {
        let discovery = GatewayDiscovery(config: config)
        defer { discovery.stop() }
        let start = ContinuousClock.now
        discovery.start()
        let remembered = GatewaySelection.remembered(in: store)
        let rememberedSource = GatewaySelection.rememberedSource(in: store)
        log.info("no gateway.url: looking for a gateway (\(describePaths(discovery)))" +
                 (config.name.map { "; want the one named \"\($0)\"" } ?? "") +
                 (remembered.map { "; chose \"\($0)\" last time" } ?? ""))
        var lastWideArea = ContinuousClock.now
        var logged: [String: String] = [:]
        var troubled = Set<String>()
        func once(_ key: String, _ message: String, warn: Bool = false) {
            guard logged[key] != message else { return }
            logged[key] = message
            if warn { log.warn(message) } else { log.info(message) }
        }
        while !isStopped {
            let lan = discovery.lanReport, wide = discovery.wideAreaReport
            for r in [lan, wide] {
                let label = r.name == "lan" ? "LAN discovery" : "wide-area discovery"
                switch r.state {
                case .unavailable(let why):
                    once(r.name, "\(label) unavailable: \(why)", warn: true)
                    troubled.insert(r.name)
                case .ready:
                    if troubled.remove(r.name) != nil { logged[r.name] = nil; log.info("\(label) is working now") }
                case .searching, .off: break
                }
                for n in r.notes + r.gateways.flatMap({ g in g.notes.map { "\(g.instanceName): \($0)" } }) {
                    once("note:" + n, "\(label): \(n)")
                }
            }
            let settled = discovery.settled || ContinuousClock.now - start >= settleTime
            switch GatewaySelection.decide(discovery.candidates, name: config.name, remembered: remembered,
                                           rememberedSource: rememberedSource, settled: settled) {
            case .connect(let g, let reason):
                log.info("chose gateway \"\(g.displayName)\" at \(g.url?.absoluteString ?? g.host) (\(g.source == .lan ? "LAN" : "wide-area")) because \(reason)")
                do { try GatewaySelection.remember(g, in: store) } catch { log.warn("could not remember the chosen gateway: \(error)") }
                return g
            case .wait(let why):
                if settled { once("wait", "waiting for a gateway: \(why)") }
                await status.set(.idle("looking for a gateway: \(why)"))
            }
            if ContinuousClock.now - lastWideArea >= wideAreaInterval {
                lastWideArea = ContinuousClock.now
                discovery.refreshWideArea()
            }
            try? await Task.sleep(for: .milliseconds(250))
        }
        return nil
    }

    private func describePaths(_ d: GatewayDiscovery) -> String {
        var parts: [String] = []
        parts.append(config.lanDiscovery ? "LAN via avahi" : "LAN off")
        if let domain = d.domain {
            parts.append("wide-area \(domain.text) via \(config.nameserver ?? "the system resolver")")
        } else {
            parts.append("wide-area off")
        }
        return parts.joined(separator: ", ")
    }
}
