import Config
import HostPresence
import Kit
import Store
import Support

/// What the connection is doing, for `openclaw-node status` and the log.
public actor GatewayStatus {
    public enum State: Sendable, Equatable {
        case idle(String)
        case connecting(String)
        case connected(url: String, serverVersion: String?)
        case pendingApproval(requestId: String?)
        case waiting(reason: String, retryInMs: Int64)
        case stopped(String)
    }

    public private(set) var state: State
    public private(set) var canvasHostUrl: String?
    public private(set) var pluginSurfaceUrls: [String: String] = [:]
    public private(set) var mainSessionKey: String?

    public init(_ initial: State = .idle("not started")) { state = initial }

    func set(_ s: State) { state = s }

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
        case .pendingApproval(let id): return "pending approval (request \(id ?? "unknown")): run `openclaw devices approve \(id ?? "<requestId>")` on the gateway"
        case .waiting(let reason, let ms): return "\(reason); retrying in \(ms / 1000) s"
        case .stopped(let why): return "stopped: \(why)"
        }
    }

    public var isConnected: Bool { if case .connected = state { return true }; return false }
}
