import Kit
import Support

/// What the connection is doing, for `openclaw-node status`, `doctor` and the log.
public actor GatewayStatus {
    /// Why reconnecting stopped, and how it starts again (docs/PROTOCOL.md §3.8).
    public struct Pause: Sendable, Equatable {
        /// pairing | authentication | protocol | configuration
        public let kind: String
        /// What happened and what to do, one line.
        public let reason: String
        public let detailCode: String?
        public let requestId: String?
        public let remediationHint: String?
        public let sinceMs: Int64

        public static let resumeHint = "resumes on approval (node.pair.resolved), SIGHUP or a config change, or `openclaw-node reconnect`"
    }

    public enum State: Sendable, Equatable {
        case idle(String)
        case connecting(String)
        case connected(url: String, serverVersion: String?)
        /// The gateway asked this device to wait for an operator's approval and retries go on.
        case pendingApproval(requestId: String?, remediationHint: String?)
        case waiting(reason: String, retryInMs: Int64)
        case paused(Pause)
        /// Ended for good (an operator token the gateway no longer takes).
        case stopped(String)

        /// The state's name as `status --json` and the metrics say it.
        public var name: String {
            switch self {
            case .idle: return "idle"
            case .connecting: return "connecting"
            case .connected: return "connected"
            case .pendingApproval: return "pendingApproval"
            case .waiting: return "waiting"
            case .paused: return "paused"
            case .stopped: return "stopped"
            }
        }

        public static let names = ["idle", "connecting", "connected", "pendingApproval", "waiting", "paused", "stopped"]
    }

    public private(set) var state: State
    public private(set) var canvasHostUrl: String?
    public private(set) var pluginSurfaceUrls: [String: String] = [:]
    public private(set) var mainSessionKey: String?

    /// Sessions established since the daemon started (the first connect and every reconnect).
    public private(set) var connects = 0

    public init(_ initial: State = .idle("not started")) { state = initial }

    package func set(_ s: State) {
        if case .connected = s, state.name != "connected" { connects += 1 }
        state = s
        for id in waiters.keys.sorted() where waiters[id]?.wanted(s) == true {
            waiters.removeValue(forKey: id)?.resume.resume(returning: s)
        }
    }

    /// A named struct, not a tuple, and no Dictionary.filter over it: Swift 6.0.3 (Debian 13's
    /// swiftlang) crashes in LoadableByAddress on the filter specialised for that tuple.
    private struct Waiter {
        let wanted: @Sendable (State) -> Bool
        let resume: CheckedContinuation<State, Never>
    }
    private var waiters: [Int: Waiter] = [:]
    private var nextWaiter = 0

    /// The first state (the current one included) that `wanted` accepts, or the state at
    /// `timeout` (`openclaw-node pair` waits for connected, paused or stopped).
    public func first(where wanted: @escaping @Sendable (State) -> Bool, timeout: Duration) async -> State {
        if wanted(state) { return state }
        nextWaiter += 1
        let id = nextWaiter
        let timer = Task { [weak self] in
            try? await Task.sleep(for: timeout)
            await self?.expire(id)
        }
        defer { timer.cancel() }
        return await withCheckedContinuation { c in waiters[id] = Waiter(wanted: wanted, resume: c) }
    }

    private func expire(_ id: Int) {
        waiters.removeValue(forKey: id)?.resume.resume(returning: state)
    }

    func setHello(_ h: GatewayProtocol.HelloOk) {
        canvasHostUrl = h.canvasHostUrl
        pluginSurfaceUrls = h.pluginSurfaceUrls
        mainSessionKey = h.mainSessionKey
    }

    public var text: String {
        switch state {
        case .idle(let why): return why
        case .connecting(let url): return "connecting to \(url)"
        case .connected(let url, let v): return "connected to \(url)\(v.map { " (gateway \($0))" } ?? "")"
        case .pendingApproval(let id, let hint):
            return "pending approval (request \(id ?? "unknown")): run `openclaw devices approve \(id ?? "<requestId>")` on the gateway" +
                (hint.map { " — gateway: \($0)" } ?? "")
        case .waiting(let reason, let ms): return "\(reason); retrying in \(ms / 1000) s"
        case .paused(let p) where p.kind == "pairing":
            // Read first what a person is asked to do, as for a pending approval that still retries.
            return "pending approval (request \(p.requestId ?? "unknown")), reconnect paused: \(p.reason); \(Pause.resumeHint)"
        case .paused(let p): return "paused: \(p.reason); \(Pause.resumeHint)"
        case .stopped(let why): return "stopped: \(why)"
        }
    }

    /// The state as one object for `status --json` and `doctor`.
    public var json: JSONValue {
        var o: [String: JSONValue]
        switch state {
        case .idle(let why): o = ["state": "idle", "reason": .string(why)]
        case .connecting(let url): o = ["state": "connecting", "url": .string(url)]
        case .connected(let url, let v):
            o = ["state": "connected", "url": .string(url)]
            if let v { o["serverVersion"] = .string(v) }
        case .pendingApproval(let id, let hint):
            o = ["state": "pendingApproval"]
            if let id { o["requestId"] = .string(id) }
            if let hint { o["remediationHint"] = .string(hint) }
        case .waiting(let reason, let ms): o = ["state": "waiting", "reason": .string(reason), "retryInMs": .number(Double(ms))]
        case .paused(let p):
            o = ["state": "paused", "pauseKind": .string(p.kind), "reason": .string(p.reason), "resume": .string(Pause.resumeHint),
                 "pausedAtMs": .number(Double(p.sinceMs))]
            if let c = p.detailCode { o["detailCode"] = .string(c) }
            if let id = p.requestId { o["requestId"] = .string(id) }
            if let h = p.remediationHint { o["remediationHint"] = .string(h) }
        case .stopped(let why): o = ["state": "stopped", "reason": .string(why)]
        }
        o["text"] = .string(text)
        return .object(o)
    }

    public var isConnected: Bool { if case .connected = state { return true }; return false }
    public var isPaused: Bool { if case .paused = state { return true }; return false }
}
