import Config
import Support

/// A capability that is not loaded: disabled in config (its bundle is never opened), or its bundle
/// is missing or was refused. It has no command rows; the dispatcher answers its commands by their
/// `<capability>.` prefix with <CAP>_DISABLED / <CAP>_UNAVAILABLE and the reason.
public struct UnloadedCapability: Capability {
    public let name: String
    let reason: String
    public var commands: [CommandSpec] { [] }

    public init(name: String, reason: String) { self.name = name; self.reason = reason }

    public func availability() async -> Availability { .unavailable(reason) }
}
