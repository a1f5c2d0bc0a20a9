import Config
import Support

/// What a bundle hands the core once its stamp matched (see the CBundleABI shim): makers for the
/// parts it provides. A capability bundle sets `capability`; the X11 helper library sets
/// `presenceSource` for `presence.mode: "x11"`; a library loaded on first use (the video encoder)
/// sets `service`, an object its users know the protocol of. A maker only builds objects: devices, threads and
/// child processes start later, in the capability's own lifecycle.
public final class BundleExports: Sendable {
    public let capability: (@Sendable (CapabilityContext) -> any Capability)?
    public let presenceSource: (@Sendable (NodeConfig.Presence) -> any PresenceSource)?
    public let service: (any Sendable)?
    /// The keys of the capability's `capabilities.<name>` section besides `enabled`, with their
    /// types, defaults and meaning: checked when the bundle loads and by `config check`.
    public let configFields: [ConfigField]

    public init(capability: (@Sendable (CapabilityContext) -> any Capability)? = nil,
                presenceSource: (@Sendable (NodeConfig.Presence) -> any PresenceSource)? = nil,
                service: (any Sendable)? = nil, configFields: [ConfigField] = []) {
        self.capability = capability
        self.presenceSource = presenceSource
        self.service = service
        self.configFields = configFields
    }

    /// For a bundle's `make` function: the retained pointer the loader takes back.
    public func retainedPointer() -> UnsafeMutableRawPointer { Unmanaged.passRetained(self).toOpaque() }
}
