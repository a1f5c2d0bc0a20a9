import NodeHost

public enum LocationCommand: String, CaseIterable, Sendable {
    case get = "location.get"
}

public struct LocationGetParams: CommandParams, Equatable {
    public var timeoutMs: Int?
    public var maxAgeMs: Int?
    public var desiredAccuracy: String?

    public func validated() throws(NodeError) -> LocationGetParams {
        var p = self
        // Android clamps rather than rejects; so do we.
        if let t = timeoutMs { p.timeoutMs = min(max(t, 1000), 60_000) }
        if let a = maxAgeMs, a < 0 { throw NodeError.invalidRequest("maxAgeMs must not be negative (got \(a))") }
        try ParamCheck.oneOf(desiredAccuracy, "desiredAccuracy", ["coarse", "balanced", "precise"])
        return p
    }
}

public enum LocationCommands {
    public static let specs: [CommandSpec] = [
        CommandSpec(LocationCommand.get.rawValue, capability: "location", params: LocationGetParams.self,
                    permission: "location", summary: "current position from gpsd",
                    paramsDoc: [("timeoutMs", "1000..60000, default 10000"), ("maxAgeMs", "int"),
                                ("desiredAccuracy", "coarse|balanced|precise")]),
    ]

    public static func capability() -> any Capability {
        PendingCapability(name: "location", commands: specs,
                          reason: "location (gpsd) is not implemented in this build yet")
    }
}
