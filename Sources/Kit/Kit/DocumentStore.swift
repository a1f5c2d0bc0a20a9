import Config
import Support

/// Durable documents a capability keeps in the node's state database (the exec-approvals document
/// of the system bundle). Capabilities never see the store itself: the runtime hands each one this
/// narrow door, scoped to the capability, when it builds it. Writes are compare-and-swap, so two
/// writers (the daemon and `openclaw-node approvals …`) never lose each other's change silently.
public protocol DocumentStore: Sendable {
    /// The stored text of `name`, nil when there is none.
    func read(_ name: String) throws(DocumentStoreError) -> String?
    /// Stores `text` as `name` in one transaction if the current text still equals `expected`
    /// (nil: only if there is none yet). False, and nothing written, when it changed meanwhile.
    func replace(_ name: String, with text: String, ifCurrent expected: String?) throws(DocumentStoreError) -> Bool
    /// Where document `name` lives, for messages ("/var/lib/openclaw-node/state.db#exec-approvals").
    func location(_ name: String) -> String
}

public struct DocumentStoreError: Error, Sendable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// What the runtime gives a bundle's maker, and all a bundle sees of the node: its own manifest and
/// config section, its own state directory, its own documents, the paths a sandbox must hide, and
/// the environment. Never the whole config, the gateway credentials or another bundle's section.
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
    /// The daemon's environment without the gateway secrets (NodeSecrets).
    public let environment: [String: String]

    public init(manifest: BundleManifest, section: BundleSection, stateDirectory: String,
                privateDirectories: [String] = [], privateFiles: [String] = [], documents: any DocumentStore = MemoryDocumentStore(),
                environment: [String: String] = NodeSecrets.environment) {
        self.manifest = manifest; self.section = section; self.stateDirectory = stateDirectory
        self.privateDirectories = privateDirectories; self.privateFiles = privateFiles; self.documents = documents; self.environment = environment
    }
}

/// For capabilities built where no state database exists (unit tests): keeps documents in memory.
public final class MemoryDocumentStore: DocumentStore {
    private let docs = Locked<[String: String]>([:])

    public init() {}

    public func read(_ name: String) -> String? { docs.withLock { $0[name] } }

    public func location(_ name: String) -> String { "memory#\(name)" }

    public func replace(_ name: String, with text: String, ifCurrent expected: String?) -> Bool {
        docs.withLock { docs in
            guard docs[name] == expected else { return false }
            docs[name] = text
            return true
        }
    }
}
