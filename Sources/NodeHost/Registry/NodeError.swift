/// The one error type a command can end with. `code` travels as data in `error.code`; `message`
/// starts with "<CODE>: " (the iOS convention, for clients that only show messages) and then says
/// what to do about it.
public struct NodeError: Error, Sendable, Equatable, CustomStringConvertible {
    public let code: String
    public let message: String
    /// True when the same request may succeed if simply sent again later (busy, transient).
    public let retryable: Bool

    public init(_ code: String, _ detail: String, retryable: Bool = false) {
        self.code = code
        self.message = detail.hasPrefix("\(code): ") ? detail : "\(code): \(detail)"
        self.retryable = retryable
    }

    public var description: String { message }

    public var json: JSONValue { ["code": .string(code), "message": .string(message)] }

    // Codes shared across capabilities (NODE_PROTOCOL.md §6.2).
    public static func invalidRequest(_ what: String) -> NodeError { NodeError("INVALID_REQUEST", what) }
    public static func unavailable(_ what: String) -> NodeError { NodeError("UNAVAILABLE", what) }
}
