import Config
import Kit
import Support

/// location.* command names (docs/PROTOCOL.md §6.1).
public enum LocationCommand: String, CaseIterable, Sendable {
    case get = "location.get"
}

/// `location.get` params, named exactly as on the wire. `validated()` fills the defaults, so the
/// handler never sees a nil timeout or accuracy.
public struct LocationGetParams: CommandParams, Equatable {
    public static let defaultTimeoutMs = 10_000
    public static let timeoutRangeMs = 1000...60_000

    public var timeoutMs: Int?
    public var maxAgeMs: Int?
    public var desiredAccuracy: String?

    public init(timeoutMs: Int? = nil, maxAgeMs: Int? = nil, desiredAccuracy: String? = nil) {
        self.timeoutMs = timeoutMs; self.maxAgeMs = maxAgeMs; self.desiredAccuracy = desiredAccuracy
    }

    public func validated() throws(NodeError) -> LocationGetParams {
        var p = self
        // Android clamps rather than rejects; so do we.
        let t = timeoutMs ?? Self.defaultTimeoutMs
        p.timeoutMs = min(max(t, Self.timeoutRangeMs.lowerBound), Self.timeoutRangeMs.upperBound)
        if let a = maxAgeMs, a < 0 { throw NodeError.invalidRequest("maxAgeMs must not be negative (got \(a))") }
        try ParamCheck.oneOf(desiredAccuracy, "desiredAccuracy", LocationAccuracy.allCases.map(\.rawValue))
        return p
    }

    /// Like iOS with its "precise" toggle on (the default there): absent means precise.
    public var accuracy: LocationAccuracy { desiredAccuracy.flatMap(LocationAccuracy.init(rawValue:)) ?? .precise }
    public var timeout: Duration { .milliseconds(timeoutMs ?? Self.defaultTimeoutMs) }
    public var maxAge: Duration? { maxAgeMs.map { .milliseconds($0) } }
}

public enum LocationCommands {
    public static let capabilityName = "location"

    /// The command table, bound to `location`.
    static func specs(_ location: LocationCapability) -> [CommandSpec] { [
        CommandSpec(LocationCommand.get.rawValue, capability: capabilityName, params: LocationGetParams.self,
                    permission: "location", summary: "current position from gpsd",
                    paramsDoc: [("timeoutMs", "1000..60000, default 10000"), ("maxAgeMs", "int"),
                                ("desiredAccuracy", "coarse|balanced|precise")],
                    handler: location.get),
    ] }

    /// The location capability for this config (`capabilities.location.*`). It talks to gpsd only
    /// once the registry finds it enabled; a disabled one never opens a socket.
    /// The keys of `capabilities.location` besides `enabled` (checked when the bundle loads).
    public static let configFields: [ConfigField] = [
        ConfigField("gpsd", .string, default: "\"127.0.0.1:2947\"", "gpsd host:port"),
        ConfigField("significantChangeMeters", .integer(0...1_000_000), default: "0",
                    "send a location.update node event after moving more than this many meters (0 = off)"),
        ConfigField("significantChangeMinIntervalMs", .integer(0...86_400_000), default: "60000",
                    "at most one location.update per this interval"),
    ]

    public static func capability(config: NodeConfig) -> LocationCapability {
        LocationCapability(settings: LocationSettings(config.capability(capabilityName)))
    }
}
