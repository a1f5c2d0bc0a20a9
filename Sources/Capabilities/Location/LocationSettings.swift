import Config
import Glibc
import Kit
import Support

/// Where gpsd listens: `capabilities.location.gpsd` as "host:port", "host" or "[v6addr]:port".
public struct GpsdEndpoint: Sendable, Equatable, CustomStringConvertible {
    public static let defaultPort = 2947
    public static let `default` = GpsdEndpoint(host: "127.0.0.1", port: defaultPort)

    public let host: String
    public let port: Int

    public init(host: String, port: Int) { self.host = host; self.port = port }

    /// nil when the text is not a usable address (the capability then reports why).
    public init?(_ text: String) {
        guard let address = HostPort(text, defaultPort: Self.defaultPort) else { return nil }
        self.init(host: address.host, port: address.port)
    }

    public var description: String { HostPort(host: host, port: port).description }
}

/// `capabilities.location.*`, typed, with the defaults in one place.
public struct LocationSettings: Sendable {
    /// The configured gpsd address; nil when `capabilities.location.gpsd` is not host:port.
    public var endpoint: GpsdEndpoint?
    /// The raw text, so an unusable value can be named in errors.
    public var endpointText: String
    /// Emit a `location.update` after moving more than this (meters); 0 = no significant-change events.
    public var significantChangeMeters: Double
    /// At most one `location.update` per this interval (a move seen earlier is sent when it ends).
    public var significantChangeMinInterval: Duration

    public static let defaultSignificantChangeMinIntervalMs = 60_000

    public init(endpoint: GpsdEndpoint? = .default, significantChangeMeters: Double = 0,
                significantChangeMinInterval: Duration = .milliseconds(defaultSignificantChangeMinIntervalMs)) {
        self.endpoint = endpoint
        self.endpointText = endpoint?.description ?? ""
        self.significantChangeMeters = significantChangeMeters
        self.significantChangeMinInterval = significantChangeMinInterval
    }

    public init(_ section: BundleSection) {
        let text = section.string("gpsd") ?? GpsdEndpoint.default.description
        endpointText = text
        endpoint = GpsdEndpoint(text)
        significantChangeMeters = max(0, section.settings["significantChangeMeters"]?.doubleValue ?? 0)
        let ms = section.settings["significantChangeMinIntervalMs"]?.doubleValue
            ?? Double(Self.defaultSignificantChangeMinIntervalMs)
        // Clamped before the conversion (Int(1e19) traps); config check refuses such values anyway.
        significantChangeMinInterval = .milliseconds(Int(min(max(0, ms), 86_400_000)))
    }
}
