import Config
import Support

/// What the runtime gives a bundle's maker, and all a bundle sees of the node: its own manifest and
/// config section, its own state directory, its own documents, the paths a sandbox must hide, the
/// environment, the presence gate and a clock. Never the whole config, the gateway credentials or
/// another bundle's section.
public struct CapabilityContext: Sendable {
    public let manifest: BundleManifest
    /// `capabilities.<name>`, validated against the manifest, every constant default filled in.
    public let section: BundleSection
    /// `<stateDir>/<name>`: the bundle's own directory (it creates it when it needs it: PrivateDirectory).
    public let stateDirectory: String
    /// What a command the bundle runs for someone else must never see: the node's state directory
    /// and its config file.
    public let privateDirectories: [String]
    public let privateFiles: [String]
    public let documents: any DocumentStore
    /// The daemon's environment without the secrets (NodeSecrets): what children may inherit.
    public let environment: [String: String]
    /// The withheld secrets, for what the config expands from them (`${NAME}`), never for a child.
    public var secrets: [String: String] = NodeSecrets.secrets
    /// Whether someone is at the device (the node's presence decision, override included).
    public let presence: any PresenceSource
    /// Monotonic and wall time.
    public let clock: any NodeClock
    /// Outgoing TCP and verified TLS connections.
    public let network: any NetworkStreams
    /// The node-hosted skills' `node://…/skills/<name>` cwd locators (system.run); set by the runtime.
    public var skills: SkillLocator = .none
    /// Keeps the device awake while a use that needs it lasts (KeepAwake).
    public var keepAwake: any KeepAwake = NoKeepAwake()
    /// node.releaseIdleLibrariesAfter: unload FFmpeg's libraries after this long unused (nil: never).
    public let releaseIdleLibrariesAfter: Duration?

    public init(manifest: BundleManifest, section: BundleSection, stateDirectory: String,
                privateDirectories: [String] = [], privateFiles: [String] = [], documents: any DocumentStore = MemoryDocumentStore(),
                environment: [String: String] = ProcessEnvironment.current,
                presence: any PresenceSource = FixedPresenceSource(.foreground, reason: "no presence source (built outside a node)"),
                clock: any NodeClock = SystemClock(), network: any NetworkStreams = PlainNetworkStreams(),
                releaseIdleLibrariesAfter: Duration? = .seconds(600)) {
        self.releaseIdleLibrariesAfter = releaseIdleLibrariesAfter
        self.manifest = manifest; self.section = section; self.stateDirectory = stateDirectory
        self.privateDirectories = privateDirectories; self.privateFiles = privateFiles; self.documents = documents; self.environment = environment
        self.presence = presence; self.clock = clock; self.network = network
    }
}
