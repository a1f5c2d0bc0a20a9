import Config
import Support

/// Whether a person could be looking at the device (README "Capabilities": presence).
public enum Presence: String, Sendable, Codable {
    case foreground, background
}

/// One reading of a presence source, with the reason a person can read in the log.
public struct PresenceSample: Sendable, Equatable {
    public let presence: Presence
    public let reason: String
    public init(_ presence: Presence, _ reason: String) { self.presence = presence; self.reason = reason }
}

/// Something that can tell whether the device is in the foreground right now.
public protocol PresenceSource: Sendable {
    func sample() async -> PresenceSample
}

/// `always` / `never` / `manual`'s starting point.
public struct FixedPresenceSource: PresenceSource {
    let value: PresenceSample
    public init(_ presence: Presence, reason: String) { value = PresenceSample(presence, reason) }
    public func sample() async -> PresenceSample { value }
}

extension PresenceSource {
    /// Throws NODE_BACKGROUND_UNAVAILABLE when nobody is at the device, naming what needs someone
    /// there and what to do: the dispatcher's refusal of a foreground-only command, asked of the
    /// node's presence monitor (the source bundles get as `CapabilityContext.presence`).
    public func requireForeground(_ what: String) async throws(NodeError) {
        let s = await sample()
        guard s.presence == .background else { return }
        throw NodeError(.backgroundUnavailable,
                        "\(what) needs someone at the device, and presence is background (\(s.reason)). " +
                        "Run `openclaw-node presence foreground` or change presence.mode")
    }
}
