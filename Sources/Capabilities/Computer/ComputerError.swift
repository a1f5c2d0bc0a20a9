import Kit

/// computer.act's own error codes, as the other fulfillers name them (docs/PROTOCOL.md §6.5).
enum ComputerError {
    static let staleFrame: NodeError.Code = "COMPUTER_STALE_FRAME"
    static let unsupportedAction: NodeError.Code = "COMPUTER_UNSUPPORTED_ACTION"
    static let unsupportedKey: NodeError.Code = "COMPUTER_UNSUPPORTED_KEY"
    static let hostBusy: NodeError.Code = "COMPUTER_HOST_BUSY"
    /// A person at the desk took over during the execution.
    static let userOverride: NodeError.Code = "COMPUTER_USER_OVERRIDE"
    static let driverError: NodeError.Code = "COMPUTER_DRIVER_ERROR"
    static let unavailable: NodeError.Code = NodeError.Code.unavailable("computer")

    static func stale(_ why: String) -> NodeError { NodeError(staleFrame, "\(why); take a new screenshot") }
}
