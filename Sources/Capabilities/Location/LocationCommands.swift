import Config
import Kit
import Support

/// location.* command names (docs/PROTOCOL.md §6.1).
public enum LocationCommand: String, CaseIterable, Sendable {
    case get = "location.get"
}

/// `location.get` params, as its manifest row describes them (timeoutMs is clamped there).
public struct LocationGetParams: CommandParams, Equatable {
    public var timeoutMs: Int
    public var maxAgeMs: Int?
    public var desiredAccuracy: LocationAccuracy

    public init(timeoutMs: Int = 10_000, maxAgeMs: Int? = nil, desiredAccuracy: LocationAccuracy = .precise) {
        self.timeoutMs = timeoutMs; self.maxAgeMs = maxAgeMs; self.desiredAccuracy = desiredAccuracy
    }

    public var accuracy: LocationAccuracy { desiredAccuracy }
    public var timeout: Duration { .milliseconds(timeoutMs) }
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
