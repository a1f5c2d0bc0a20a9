import Kit
import Support

extension StateStore {
    /// The stored text of a capability's document, nil when there is none.
    public func document(capability: String, name: String) throws(Failure) -> String? {
        try locked { (db: SQLiteDatabase) throws(SQLiteError) in
            try db.query("SELECT body FROM capability_documents WHERE capability = ? AND name = ?",
                         [.text(capability), .text(name)]).first?.first?.text
        }
    }

    /// Compare-and-swap inside one IMMEDIATE transaction, so another process (the daemon and a
    /// CLI command) cannot write between the comparison and the write.
    public func replaceDocument(capability: String, name: String, with text: String,
                                ifCurrent expected: String?) throws(Failure) -> Bool {
        try locked { (db: SQLiteDatabase) throws(SQLiteError) in
            try db.transaction { () throws(SQLiteError) -> Bool in
                let current = try db.query("SELECT body FROM capability_documents WHERE capability = ? AND name = ?",
                                           [.text(capability), .text(name)]).first?.first?.text
                guard current == expected else { return false }
                try db.query("""
                    INSERT INTO capability_documents (capability, name, body, updated_at_ms) VALUES (?, ?, ?, ?)
                    ON CONFLICT (capability, name) DO UPDATE SET body = excluded.body, updated_at_ms = excluded.updated_at_ms
                    """, [.text(capability), .text(name), .text(text), .integer(StateStore.nowMs())])
                return true
            }
        }
    }
}

/// One capability's `DocumentStore`, over the node's state database. The database is opened on
/// first use, so building a capability (for `caps`, say) never creates a state directory.
public final class CapabilityDocuments: DocumentStore {
    private let capability: String
    private let stateDir: String
    private let store = Locked<StateStore?>(nil)

    public init(capability: String, stateDir: String) {
        self.capability = capability
        self.stateDir = stateDir
    }

    public func location(_ name: String) -> String { stateDir + "/" + StateStore.fileName + "#" + name }

    private func opened() throws(DocumentStoreError) -> StateStore {
        try store.withLock { (store: inout StateStore?) throws(DocumentStoreError) -> StateStore in
            if let store { return store }
            do {
                let s = try StateStore(stateDir: stateDir)
                store = s
                return s
            } catch { throw DocumentStoreError("\(error)") }
        }
    }

    public func read(_ name: String) throws(DocumentStoreError) -> String? {
        let store = try opened()
        do { return try store.document(capability: capability, name: name) }
        catch { throw DocumentStoreError(error.description) }
    }

    public func replace(_ name: String, with text: String, ifCurrent expected: String?) throws(DocumentStoreError) -> Bool {
        let store = try opened()
        do { return try store.replaceDocument(capability: capability, name: name, with: text, ifCurrent: expected) }
        catch { throw DocumentStoreError(error.description) }
    }
}
