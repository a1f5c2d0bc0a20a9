/// A capability whose command rows exist (so the table, docs and doctor know them) but whose
/// implementation has not landed yet. It reports itself unavailable, so its commands are never
/// advertised, and an explicit invoke answers <CAP>_UNAVAILABLE instead of pretending to work.
public struct PendingCapability: Capability {
    public let name: String
    public let commands: [CommandSpec]
    let reason: String

    public init(name: String, commands: [CommandSpec], reason: String) {
        self.name = name; self.commands = commands; self.reason = reason
    }

    public func availability() async -> Availability { .unavailable(reason) }

    public func invoke(_ command: String, params: any Sendable, context: InvocationContext) async throws(NodeError) -> JSONValue {
        throw NodeError("\(name.uppercased())_UNAVAILABLE", reason)
    }
}
