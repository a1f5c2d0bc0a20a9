import Config
import Support

/// A capability that is not loaded: disabled in config (its bundle is never opened), or its bundle
/// is missing, was refused, or its code and manifest disagree. Its rows still come from its
/// manifest, so every one of its commands is known and answered with <CAP>_DISABLED /
/// <CAP>_UNAVAILABLE and the reason, never "unknown command".
public struct UnloadedCapability: Capability {
    public let manifest: BundleManifest
    let reason: String
    public var handlers: [CommandHandler] { [] }

    public init(manifest: BundleManifest, reason: String) { self.manifest = manifest; self.reason = reason }

    public func availability() async -> Availability { .unavailable(reason) }
}
