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

/// location.get's result (LocationPayload builds it from a fix); unknown optional fields are left out.
public struct LocationGetResult: Encodable, Sendable, Equatable {
    public let lat: Double
    public let lon: Double
    public let accuracyMeters: Double
    public let altitudeMeters: Double?
    public let speedMps: Double?
    public let headingDeg: Double?
    public let timestamp: String
    public let isPrecise: Bool
    public var source = "gps"
}

public enum LocationCommands {
    /// The command table, bound to `location`.
    static func handlers(_ location: LocationCapability) -> [CommandHandler] { [
        CommandHandler(LocationCommand.get.rawValue, params: LocationGetParams.self, handler: location.get),
    ] }

    public static func capability(context: CapabilityContext) -> LocationCapability {
        LocationCapability(manifest: context.manifest, settings: LocationSettings(context.section))
    }
}
