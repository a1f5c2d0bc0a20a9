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
