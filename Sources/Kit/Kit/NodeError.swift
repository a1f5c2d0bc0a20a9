import Config
import Support

/// The one error type a command can end with. `code` travels as data in `error.code`; `message`
/// starts with "<CODE>: " (the iOS convention, for clients that only show messages) and then says
/// what to do about it.
public struct NodeError: Error, Sendable, Equatable, CustomStringConvertible {
    /// An error code. The codes every capability shares are the constants below; a capability's own
    /// are `<CAPABILITY>_<WHAT>` (CAMERA_BUSY, LOCATION_TIMEOUT), declared next to that capability
    /// as constants of this type (see docs/PROTOCOL.md §6.2).
    public struct Code: RawRepresentable, Hashable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public init(stringLiteral value: String) { rawValue = value }
        public var description: String { rawValue }

        public static let invalidRequest: Code = "INVALID_REQUEST"
        public static let unavailable: Code = "UNAVAILABLE"
        /// The dispatcher's deadline passed (the caller has given up).
        public static let timeout: Code = "TIMEOUT"
        /// The gateway cancelled the invoke.
        public static let cancelled: Code = "CANCELLED"
        /// Too many invokes in flight; retryable.
        public static let nodeBusy: Code = "NODE_BUSY"
        /// A foreground-only command while nobody is at the device.
        public static let backgroundUnavailable: Code = "NODE_BACKGROUND_UNAVAILABLE"
        /// The result does not fit in what the transport accepts (PayloadBudget).
        public static let payloadTooLarge: Code = "PAYLOAD_TOO_LARGE"
        /// Another program holds the microphone (camera.clip, screen.record, talk).
        public static let micBusy: Code = "MIC_BUSY"
        /// A gateway call's connection ended before its reply came.
        public static let connectionLost: Code = "CONNECTION_LOST"
        /// The node refused an invoke before doing anything of it (it is stopping); the gateway may
        /// retry it. Never after progress or a handler start (docs/PROTOCOL.md "Duplex invokes").
        public static let nodeNotReady: Code = "NODE_NOT_READY"
        /// A duplex invoke's gateway input piled up past what the node buffers unread (64 KiB).
        public static let inputBufferOverflow: Code = "INPUT_BUFFER_OVERFLOW"
        /// A duplex invoke's binary channel broke the fragment framing rules.
        public static let duplexFraming: Code = "DUPLEX_FRAMING"
        /// `<CAP>_DISABLED`: the capability is off in config.
        public static func disabled(_ capability: String) -> Code { Code(rawValue: capability.uppercased() + "_DISABLED") }
        /// `<CAP>_UNAVAILABLE`: the capability cannot serve on this device now.
        public static func unavailable(_ capability: String) -> Code { Code(rawValue: capability.uppercased() + "_UNAVAILABLE") }
    }

    public let code: Code
    public let message: String
    /// True when the same request may succeed if simply sent again later (busy, transient).
    public let retryable: Bool

    public init(_ code: Code, _ detail: String, retryable: Bool = false) {
        self.code = code
        self.message = detail.hasPrefix("\(code): ") ? detail : "\(code): \(detail)"
        self.retryable = retryable
    }

    /// For messages other nodes word exactly so (system.run's "SYSTEM_RUN_DENIED: …", sent with
    /// code UNAVAILABLE): kept verbatim, without the "<CODE>: " prefix.
    public init(_ code: Code, verbatim message: String) {
        self.code = code
        self.message = message
        self.retryable = false
    }

    public var description: String { message }

    public var json: JSONValue { ["code": .string(code.rawValue), "message": .string(message)] }

    /// The error a `json` encodes (the daemon's control-socket replies), message kept verbatim.
    public init?(json: JSONValue?) {
        guard let code = json?["code"]?.stringValue, let message = json?["message"]?.stringValue else { return nil }
        self.init(Code(rawValue: code), verbatim: message)
    }

    // Codes shared across capabilities (docs/PROTOCOL.md §6.2).
    public static func invalidRequest(_ what: String) -> NodeError { NodeError(.invalidRequest, what) }
    public static func unavailable(_ what: String) -> NodeError { NodeError(.unavailable, what) }
}
