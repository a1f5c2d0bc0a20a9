import Foundation
import NodeHost

/// Where gpsd listens: `capabilities.location.gpsd` as "host:port", "host" or "[v6addr]:port".
public struct GpsdEndpoint: Sendable, Equatable, CustomStringConvertible {
    public static let defaultPort = 2947
    public static let `default` = GpsdEndpoint(host: "127.0.0.1", port: defaultPort)

    public let host: String
    public let port: Int

    public init(host: String, port: Int) { self.host = host; self.port = port }

    /// nil when the text is not a usable address (the capability then reports why).
    public init?(_ text: String) {
        let t = text.trimmingCharacters(in: .whitespaces)
        guard !t.isEmpty else { return nil }
        var host = t
        var portText: Substring?
        if t.hasPrefix("[") {
            // "[::1]:2947" or "[::1]"
            guard let close = t.firstIndex(of: "]") else { return nil }
            host = String(t[t.index(after: t.startIndex)..<close])
            let rest = t[t.index(after: close)...]
            if !rest.isEmpty {
                guard rest.hasPrefix(":") else { return nil }
                portText = rest.dropFirst()
            }
        } else if let colon = t.lastIndex(of: ":") {
            // A bare IPv6 address has several colons and no port.
            if t.firstIndex(of: ":") == colon {
                host = String(t[..<colon])
                portText = t[t.index(after: colon)...]
            }
        }
        var port = Self.defaultPort
        if let portText {
            guard let p = Int(portText), (1...65_535).contains(p) else { return nil }
            port = p
        }
        guard !host.isEmpty else { return nil }
        self.host = host
        self.port = port
    }

    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
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

    public init(_ section: NodeConfig.CapabilitySection) {
        let text = section.string("gpsd") ?? GpsdEndpoint.default.description
        endpointText = text
        endpoint = GpsdEndpoint(text)
        significantChangeMeters = max(0, section.settings["significantChangeMeters"]?.doubleValue ?? 0)
        let ms = section.settings["significantChangeMinIntervalMs"]?.doubleValue
            ?? Double(Self.defaultSignificantChangeMinIntervalMs)
        significantChangeMinInterval = .milliseconds(Int(max(0, ms)))
    }
}
